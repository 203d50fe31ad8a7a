// Where a Q6_K block's fields sit on the device. Q6_K is stored as planes (lib/quant/repack.h:
// ql[128] | qh[64] | scales[16] | d, each field of every block in turn), and the planes are cut by
// tiles of consecutive blocks: a tile of T blocks is [ql T x 128 | qh T x 64 | scales T x 16 |
// d T x 2] (210 T bytes), tiles one after another. Rows of 16 k blocks (K = 4096, 12288: every Qwen3 /
// Qwen3.5 hidden and FFN width) take tiles of 16, rows of exactly 8 blocks (K = 2048) tiles of 8;
// any other row length keeps one tile for the whole tensor (or expert slice), the plain planes.
//
// Why: the streamed GEMV (cuda/gemv/gemv_stream.cu) copies a row piece of 16 blocks (8 for the
// 8-block rows) into shared memory with one bulk copy per plane: 32 copies a stage of 26.9 KB, and
// the consumers waited on them (ncu, Qwen3-8B Q4_K_M lm_head alone: 40 % of the warps' samples on
// the full-barrier wait, 3.0 TB/s). With a tile per row piece the piece is one 3,360-byte copy:
// a timing build reading the bytes that way took the lm_head to 4.04 TB/s (170 -> 127 us) and the
// downs from 20.3 to 17.7 us (next127); this layout (c7bd59c, next129): tg128 Qwen3-8B Q4_K_M
// 499 -> 517, Qwen3.5-9B 480 -> 505.
//
// The host side (DeviceWeights::upload, the kernel check) asks q6k_tile_blocks for T and cuts the
// planes with lib/quant's to_planes(..., tile); every kernel that reads Q6_K asks Q6KTiles for the
// byte offsets, so one rule serves both.
#pragma once

#include <cstdint>

#include "cuda/common/ggml_types.cuh"

#if defined(__CUDACC__)
#define BW24_HOST_DEVICE __host__ __device__
#else
#define BW24_HOST_DEVICE
#endif

namespace bw24::cuda {

// log2 of the blocks of a tile for rows of row_blocks 256-weight blocks, or kQ6KWhole (one tile).
constexpr int kQ6KWhole = 62;
BW24_HOST_DEVICE constexpr int q6k_tile_shift(int64_t row_blocks) {
  return row_blocks % 16 == 0 ? 4 : row_blocks == 8 ? 3 : kQ6KWhole;
}
// The blocks of a tile of a tensor of n_blocks blocks in rows of row_blocks.
BW24_HOST_DEVICE constexpr int64_t q6k_tile_blocks(int64_t row_blocks, int64_t n_blocks) {
  return q6k_tile_shift(row_blocks) == kQ6KWhole ? n_blocks : int64_t{1} << q6k_tile_shift(row_blocks);
}

// The tile to_planes cuts a weight's planes by (0: none, one tile): Q6_K's rule above, by the row's
// element count cols. The uploaders ask this for every plane format.
BW24_HOST_DEVICE constexpr int64_t device_plane_tile(uint32_t ggml_type, int64_t cols, int64_t n_blocks) {
  return ggml_type == kQ6_K && cols % 256 == 0 ? q6k_tile_blocks(cols / 256, n_blocks) : 0;
}

// Byte offsets of block gb's fields: a shift, a mask and a multiply (the whole-tensor case has
// base 0 and local = gb, the plain planes).
struct Q6KTiles {
  int sh;          // log2 of a tile's blocks, or kQ6KWhole
  int64_t stride;  // blocks a tile: each plane of a tile holds this many blocks' fields
  BW24_HOST_DEVICE Q6KTiles(int64_t n_blocks, int64_t row_blocks)
      : sh(q6k_tile_shift(row_blocks)), stride(q6k_tile_blocks(row_blocks, n_blocks)) {}
  BW24_HOST_DEVICE int64_t base(int64_t gb) const { return (gb >> sh) * stride * 210; }
  BW24_HOST_DEVICE int64_t local(int64_t gb) const { return gb & ((int64_t{1} << sh) - 1); }
  BW24_HOST_DEVICE int64_t ql(int64_t gb) const { return base(gb) + local(gb) * 128; }
  BW24_HOST_DEVICE int64_t qh(int64_t gb) const { return base(gb) + stride * 128 + local(gb) * 64; }
  BW24_HOST_DEVICE int64_t sc(int64_t gb) const { return base(gb) + stride * 192 + local(gb) * 16; }
  BW24_HOST_DEVICE int64_t d(int64_t gb) const { return base(gb) + stride * 208 + local(gb) * 2; }
};

}  // namespace bw24::cuda
