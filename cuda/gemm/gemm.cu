// The prefill GEMM (cuda/gemm/gemm.cuh). In this file, in order:
//   1. bf16 mma.sync m16n8k16 tiles with f32 accumulators (every arch; the dense GEMM below sm_90
//      and at M <= 64, and the grouped GEMM of MoE prefill over bf16 or in-tile expanded experts);
//   2. on sm_90a the warpgroup-MMA (wgmma) dense GEMM, fed by cp.async, then by TMA (the pick);
//   3. the dispatch table of the dense configurations and the entry points.
// The int8 grouped GEMMs of MoE prefill (mma s8 over Q4_K / Q6_K quants as stored) are gemm_q8.cu's.
// One epilogue, store_c (tile.cuh), writes every tile's C fragments, there and here.
//
// Tiling (one kernel template, a table of configurations at the end): a CTA computes a BM x BN
// tile of C (BM tokens x BN weight rows) with WarpsM x WarpsN warps, each a (BM / WarpsM) x
// (BN / WarpsN) sub-tile of m16n8 mma tiles. K advances 32 per stage through a cp.async ring in
// shared memory (16 KB a stage at 128 x 128): while the tensor cores work on stage k, the loads of
// the next stages are in flight (kernels-hopper.md §1: bytes in flight hide the L2/HBM latency).
//
// Shared layout: a tile row of 32 bf16 is 64 bytes = 4 chunks of 16; chunk c of row r sits at
// c ^ ((r >> 1) & 3). ldmatrix reads 8 consecutive rows at one logical chunk; with a 64-byte row
// stride, rows r and r + 2 would share banks (4-way conflict) without the swizzle, with it the 8
// reads hit 8 distinct 16-byte bank groups.
//
// Grid: x = token tiles (fastest), y = weight-row tiles: the CTAs that share a weight tile run
// side by side, so the weights come from HBM once and from L2 after.
//
// Napkin math (H200, Qwen3-8B, M = 512): 8.2 TFLOP per pass; mma.sync bf16 peaks near ~660
// TFLOP/s on sm_90 (wgmma ~990), so 12-15 ms at best, plus the bf16 expansion of the weights.
//
// The weight side of a stage comes through a B loader: BF16 rows by cp.async straight into the
// tile the MMAs read, or (Q4_K, Q6_K in the grouped GEMM: the fused expansion) the quantized bytes
// of the stage's 32 columns by cp.async into a staging ring, expanded to one bf16 tile in shared
// memory right before the MMAs. Why: the separate expansion writes 2 bytes per weight to HBM and
// the GEMM reads them back (4.6 bytes of traffic per Q4_K weight against 0.56), half of a
// Qwen3-30B-A3B pass, where an expert's ~32 tokens make one token tile, so each weight is expanded
// once either way. Dense passes have 4-8 token tiles per weight tile, each of which would expand the
// same weights again; there the one expansion pass into a scratch measured faster.
#include <cuda.h>  // CUtensorMap and its enums (the encoder comes through the runtime)
#include <cuda_bf16.h>

#include <type_traits>

#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemm/expand.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemm/tile.cuh"

namespace bw24::cuda {
namespace {

using namespace gemm_detail;

// A tile configuration: CTA tile kBM x kBN, kWarpsM x kWarpsN warps, kStages deep cp.async ring.
template <int BM, int BN, int WarpsM, int WarpsN, int Stages>
struct Tiles {
  static constexpr int kBM = BM, kBN = BN, kWarpsM = WarpsM, kWarpsN = WarpsN, kStages = Stages;
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kWM = BM / WarpsM, kWN = BN / WarpsN;  // warp tile
  static constexpr int kMT = kWM / 16, kNT = kWN / 8;          // mma tiles per warp
  static_assert(kWarpsM * kWM == BM && kWM % 16 == 0 && kWN % 16 == 0, "whole m16 / n16 warp tiles");
};

// rows x kBK tile starting at global row r0 of a [n_rows][k] matrix, column k0, into s.
template <int kRows, int kThreads>
__device__ __forceinline__ void load_tile(bf16* s, const bf16* g, int64_t r0, int64_t n_rows, int64_t k, int64_t k0) {
  static_assert(kRows * 4 % kThreads == 0, "whole chunks per thread");
#pragma unroll
  for (int it = 0; it < kRows * 4 / kThreads; ++it) {
    const int i = threadIdx.x + it * kThreads, r = i / 4, c = i % 4;
    const int64_t gr = r0 + r;
    const bool in = gr < n_rows;
    cp_async16(s + swz(r, c), g + (in ? gr : 0) * k + k0 + 8 * c, in ? 16 : 0);
  }
}

// The rows of one CTA's A tile: row r of the tile reads a + row(r) * K, where row(r) = m0 + r, or
// through the grouped GEMM's index (sorted[m0 + r] / a_div); rows at or past m_end are zeros.
// Resolved once per CTA (kRows * 4 / kThreads rows per thread), not per K stage.
template <int kRows, int kThreads>
struct ARows {
  static constexpr int kIters = kRows * 4 / kThreads;
  const bf16* row[kIters];
  const bf16* base;  // a valid address for the zero-filled rows (cp.async reads 0 bytes of it)
  __device__ ARows(const bf16* a, int64_t K, int64_t m0, int64_t m_end, const int32_t* index, int a_div) : base(a) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int64_t m = m0 + (threadIdx.x + it * kThreads) / 4;
      row[it] = m >= m_end ? nullptr : a + (index ? index[m] / a_div : m) * K;
    }
  }
  __device__ __forceinline__ void load(bf16* s, int64_t k0) const {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = threadIdx.x + it * kThreads, r = i / 4, c = i % 4;
      cp_async16(s + swz(r, c), row[it] ? row[it] + k0 + 8 * c : base, row[it] ? 16 : 0);
    }
  }
};

// Eight floats as bf16 into one 16-byte chunk of a tile (round to nearest, as dequant_bf16).
__device__ __forceinline__ void store8(bf16* dst, const float* v) {
  alignas(16) bf16 b[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) b[j] = __float2bfloat16_rn(v[j]);
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(b);
}

// B loaders: issue() starts the copies of stage kt (columns [32 kt, 32 kt + 32)) of weight rows
// [n0, n0 + kBN) into a staging slot; the MMAs then read a [kBN][kBK] bf16 tile: the slot itself
// (kExpands false) or what expand() makes of it. Rows at or past N come in as zeros.
template <int kBN, int kThreads>
struct LoadBf16 {
  static constexpr int kStageBytes = kBN * kBK * 2;
  static constexpr bool kExpands = false;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    load_tile<kBN, kThreads>(reinterpret_cast<bf16*>(st), reinterpret_cast<const bf16*>(w), n0, N, K, int64_t{kt} * kBK);
  }
  __device__ static void expand(const uint8_t*, bf16*, int64_t, int64_t, int64_t, int) {}
};

// Q4_K (file layout, 144-byte blocks of 256): stage kt is sub-block s = kt % 8 of block kt / 8.
// Per row 48 bytes: the block's head (d, dmin, scales) and the 32 qs bytes of s's pair.
template <int kBN, int kThreads>
struct LoadQ4K {
  static constexpr int kRowBytes = 48, kStageBytes = kBN * kRowBytes;
  static constexpr bool kExpands = true;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8;
    const int s = kt % 8;
    for (int i = threadIdx.x; i < kBN * 3; i += kThreads) {
      const int r = i / 3, part = i % 3;
      const int64_t row = n0 + r;
      const bool in = row < N;
      const uint8_t* blk = w + ((in ? row : 0) * bpr + kb) * 144;
      cp_async16(st + r * kRowBytes + part * 16, blk + (part == 0 ? 0 : 16 + 32 * (s / 2) + 16 * (part - 1)),
                 in ? 16 : 0);
    }
  }
  __device__ static void expand(const uint8_t* st, bf16* tile, int64_t, int64_t, int64_t, int kt) {
    for (int i = threadIdx.x; i < kBN * 4; i += kThreads) {
      const int r = i / 4, c = i % 4;
      const uint8_t* head = st + r * kRowBytes;
      float v[8];
      q4k_expand8(head, head + 16 + 8 * c, kt % 8, v);
      store8(tile + swz(r, c), v);
    }
  }
};

// Q6_K planes (lib/quant/repack.h: ql[128] | qh[64] | scales[16] | d of every block in turn, cut by
// tiles: cuda/common/q6k_tiles.cuh): stage kt is sub-block s = kt % 8 = 4 half + j of block kt / 8.
// Per row 96 bytes: the 32 ql and 32 qh bytes of s, the block's 16 scales and the aligned 16 bytes
// that hold its d (the weight allocations carry 16 bytes of slack for the last block's window,
// DeviceWeights::upload).
template <int kBN, int kThreads>
struct LoadQ6K {
  static constexpr int kRowBytes = 96, kStageBytes = kBN * kRowBytes;
  static constexpr bool kExpands = true;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8;
    const Q6KTiles t(N * bpr, bpr);  // planes cut by tiles (cuda/common/q6k_tiles.cuh)
    const int s = kt % 8, half = s / 4, j = s % 4;
    for (int i = threadIdx.x; i < kBN * 6; i += kThreads) {
      const int r = i / 6, part = i % 6;
      const int64_t row = n0 + r;
      const bool in = row < N;
      const int64_t gb = (in ? row : 0) * bpr + kb;
      const int64_t off = part < 2    ? t.ql(gb) + 64 * half + 32 * (j & 1) + 16 * part
                          : part < 4  ? t.qh(gb) + 32 * half + 16 * (part - 2)
                          : part == 4 ? t.sc(gb)
                                      : t.d(gb) & ~int64_t{15};
      cp_async16(st + r * kRowBytes + part * 16, w + off, in ? 16 : 0);
    }
  }
  __device__ static void expand(const uint8_t* st, bf16* tile, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8;
    const Q6KTiles t(N * bpr, bpr);
    const int s = kt % 8, half = s / 4, j = s % 4;
    for (int i = threadIdx.x; i < kBN * 4; i += kThreads) {
      const int r = i / 4, c = i % 4, l0 = 8 * c;
      const uint8_t* row = st + r * kRowBytes;
      const int64_t gb = (n0 + r < N ? n0 + r : 0) * bpr + kb;
      const int8_t sc = static_cast<int8_t>(row[64 + 8 * half + 2 * j + l0 / 16]);
      float v[8];
      q6k_expand8(row + l0, row + 32 + l0, j, half_at(row + 80 + (t.d(gb) & 15)) * sc, v);
      store8(tile + swz(r, c), v);
    }
  }
};

// Shared memory of configuration C with B loader BL: the A ring, the B staging ring and, for
// expanding loaders, the one bf16 B tile the MMAs read.
template <class C, template <int, int> class BL>
constexpr size_t smem_bytes() {
  using B = BL<C::kBN, C::kThreads>;
  return size_t{C::kStages} * (size_t{C::kBM} * kBK * 2 + B::kStageBytes) + (B::kExpands ? size_t{C::kBN} * kBK * 2 : 0);
}

template <class C, template <int, int> class BL>
__device__ __forceinline__ void gemm_tile(const TileJob& j, uint8_t* smem) {
  using B = BL<C::kBN, C::kThreads>;
  constexpr int kBM = C::kBM, kStages = C::kStages, kWM = C::kWM, kWN = C::kWN, kMT = C::kMT, kNT = C::kNT;
  bf16* sa = reinterpret_cast<bf16*>(smem);
  uint8_t* sq = smem + kStages * kBM * kBK * 2;                         // B staging ring
  bf16* sx = reinterpret_cast<bf16*>(sq + kStages * B::kStageBytes);  // expanded B tile
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / C::kWarpsN, wn = warp % C::kWarpsN;
  const int kt_count = static_cast<int>(j.K / kBK);
  const ARows<kBM, C::kThreads> arows(j.a, j.K, j.m0, j.m_end, j.a_index, j.a_div);
  auto load_stage = [&](int stage, int kt) {
    arows.load(sa + stage * kBM * kBK, int64_t{kt} * kBK);
    B::issue(sq + stage * B::kStageBytes, j.w, j.n0, j.N, j.K, kt);
  };
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }

  float acc[kMT][kNT][4] = {};
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt landed for everyone; stage kt - 1 (and the expanded tile) no longer read
    const uint8_t* slot = sq + (kt % kStages) * B::kStageBytes;
    if constexpr (B::kExpands) {
      B::expand(slot, sx, j.n0, j.N, j.K, kt);
      __syncthreads();
    }
    if (kt + kStages - 1 < kt_count) load_stage((kt + kStages - 1) % kStages, kt + kStages - 1);
    cp_async_commit();
    const bf16* ta = sa + (kt % kStages) * kBM * kBK;
    const bf16* tb = B::kExpands ? sx : reinterpret_cast<const bf16*>(slot);
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[kMT][4], bfr[kNT][2];
#pragma unroll
      for (int i = 0; i < kMT; ++i) {
        const int row = wm * kWM + i * 16 + lane % 16;
        ldmatrix_x4(af[i], ta + swz(row, 2 * kk + lane / 16));
      }
#pragma unroll
      for (int jj = 0; jj < kNT / 2; ++jj) {
        const int row = wn * kWN + jj * 16 + lane % 8 + (lane / 16) * 8;
        uint32_t r[4];
        ldmatrix_x4(r, tb + swz(row, 2 * kk + (lane / 8) % 2));
        bfr[2 * jj][0] = r[0];
        bfr[2 * jj][1] = r[1];
        bfr[2 * jj + 1][0] = r[2];
        bfr[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int jj = 0; jj < kNT; ++jj) mma_bf16(acc[i][jj], af[i], bfr[jj][0], bfr[jj][1]);
    }
  }
  cp_async_wait<0>();

  // Accumulator (i, jj): c0, c1 at row lane / 4, columns 2 (lane % 4) + {0, 1}; c2, c3 eight rows down.
  const bool pairs = (j.N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int jj = 0; jj < kNT; ++jj)
      store_c(j, pairs, wm * kWM + i * 16 + lane / 4, wn * kWN + jj * 8 + 2 * (lane % 4), acc[i][jj]);
}

template <class C, template <int, int> class BL>
__global__ void __launch_bounds__(C::kThreads) gemm_kernel(const bf16* __restrict__ a, Segments seg, int64_t M,
                                                           int64_t K, bool add) {
  extern __shared__ uint4 smem_raw[];
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  pdl_begin();
  const TileJob job{a,       nullptr, 1, static_cast<int64_t>(blockIdx.x) * C::kBM, M, pick_field(seg.w, s), n0,
                    pick_field(seg.n, s), K, pick_field(seg.c, s), nullptr, pick_field(seg.ldc, s), add};
  gemm_tile<C, BL>(job, reinterpret_cast<uint8_t*>(smem_raw));
}

// The grouped GEMM (MoE prefill): CTA x is tile tile_start[e0] + x of the routing's tile list
// (exits past tile_start[e1]); the tile's expert e picks the weights w + (e - e0) w_stride of each
// segment.
template <class C, template <int, int> class BL>
__global__ void __launch_bounds__(C::kThreads) gemm_grouped_kernel(const bf16* __restrict__ a, Segments seg,
                                                                   GemmGroups g, int64_t K, bool add) {
  extern __shared__ uint4 smem_raw[];
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  pdl_begin();  // the tile list is the routing's output
  const int tile = g.tile_start[g.e0] + static_cast<int>(blockIdx.x);
  if (tile >= g.tile_start[g.e1]) return;
  const int2 t = g.tiles[tile];  // {expert, first sorted row}
  const int64_t N = pick_field(seg.n, s);
  const TileJob job{a,
                    g.a_div ? g.sorted : nullptr,
                    g.a_div ? g.a_div : 1,
                    t.y,
                    g.offsets[t.x + 1],
                    pick_field(seg.w, s) + (t.x - g.e0) * pick_field(seg.w_stride, s),
                    n0,
                    N,
                    K,
                    pick_field(seg.c, s),
                    g.c_scatter ? g.sorted : nullptr,
                    pick_field(seg.ldc, s),
                    add};
  gemm_tile<C, BL>(job, reinterpret_cast<uint8_t*>(smem_raw));
}

template <class C, template <int, int> class BL>
cudaError_t launch(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  constexpr size_t smem = smem_bytes<C, BL>();
  constexpr auto kernel = gemm_kernel<C, BL>;
  BW24_CUDA_TRY(allow_smem<kernel>(smem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(gemm_kernel<C, BL>, grid, dim3(C::kThreads), smem, s, a, seg, m, k, add);
}

// The grouped GEMM's one configuration: 64-token tiles (kGemmGroupRows), as an expert sees ~32
// tokens of a 512-token pass over 128 experts with 8 picks each.
using GroupedTiles = Tiles<kGemmGroupRows, 128, 2, 4, 4>;

template <template <int, int> class BL>
cudaError_t launch_grouped(const bf16* a, const Segments& seg, const GemmGroups& g, int64_t max_rows, int64_t k,
                           bool add, cudaStream_t s) {
  using C = GroupedTiles;
  constexpr size_t smem = smem_bytes<C, BL>();
  constexpr auto kernel = gemm_grouped_kernel<C, BL>;
  BW24_CUDA_TRY(allow_smem<kernel>(smem));
  // Tiles of experts [e0, e1): at most one partial tile per expert beyond max_rows / kBM full ones.
  const dim3 grid(static_cast<unsigned>((max_rows + C::kBM - 1) / C::kBM + (g.e1 - g.e0)), seg.tile_end[seg.count - 1]);
  return launch_pdl(gemm_grouped_kernel<C, BL>, grid, dim3(C::kThreads), smem, s, a, seg, g, k, add);
}

// ---- sm_90a: the warpgroup MMA (wgmma) path of the dense GEMM ----
// Why: at M = 512 the mma.sync kernel above reaches 260-370 TFLOP/s of the ~660 mma.sync can give
// on sm_90; wgmma reads both operands straight from shared memory (no ldmatrix, no register
// fragments of A and B), one instruction a 64 x BN x 16 product for a warpgroup (4 warps), and
// peaks near ~990 TFLOP/s. Napkin math, Qwen3-8B at M = 512: 8.2 TFLOP a pass, ~14 ms at 600
// TFLOP/s against ~22 ms measured on mma.sync.
//
// A CTA is two warpgroups (256 threads), each 64 token rows x BN weight rows of C; K advances 64 a
// stage (a row's 128 bytes). Every thread issues cp.async for a share of each stage (no producer
// warps: the copies are asynchronous, issuing them costs 8-12 instructions a stage), then
// `fence.proxy.async` makes its copies visible to the tensor cores' (async proxy) reads.
//
// Shared layout: the 128-byte swizzle wgmma reads K-major tiles in: row r of a tile at r * 128
// bytes, its 16-byte chunk c at chunk position c ^ (r % 8); 8-row atoms 1024 bytes apart (the
// descriptor's stride), each tile 1024-byte aligned. The k16 steps inside a 64-wide stage advance
// the descriptor's start address by 32 bytes (the swizzle applies to the final address bits).
//
// Pipeline: kStages slots, loads run kStages - 2 stages ahead. The wgmma group of stage kt stays in
// flight while stage kt + 1 issues (wgmma.wait_group 1), so the slot a load overwrites (stage
// kt - 2's) is free once every thread has passed the barrier of iteration kt.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BW24_WGMMA 1
#else
#define BW24_WGMMA 0
#endif

template <int BN, int Stages>
struct WgTiles {
  static constexpr int kBM = 128, kBN = BN, kBK = 64, kStages = Stages, kThreads = 256;
  static constexpr int kAhead = Stages - 2;  // stages loading ahead of the one the MMAs read
  static constexpr int kTileA = kBM * kBK, kTileB = kBN * kBK;  // bf16 elements
  static constexpr size_t kSmem = size_t{Stages} * (kTileA + kTileB) * 2 + 1024;  // + the 1024 alignment
  static_assert(BN == 128 || BN == 256, "wgmma_n128 / wgmma_n256");
  static_assert(Stages >= 3, "a slot read, a slot in flight, one loading");
};

// Element offset of (row, 16-byte chunk) in a 128-byte-swizzled [rows][64] tile.
__device__ __forceinline__ int sw128(int row, int chunk) { return row * 64 + ((chunk ^ (row & 7)) << 3); }

// The wgmma shared-memory descriptor of a K-major tile in the 128-byte swizzle: start address
// (bits 0-13, in 16 bytes), leading byte offset 16 (unused by swizzled K-major), stride byte
// offset 1024 (bits 32-45: one 8-row atom to the next), layout type 1 = 128-byte swizzle.
__device__ __forceinline__ uint64_t wg_desc(const bf16* tile) {
  const uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

#if BW24_WGMMA
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n) : "memory");
}
// The generic-proxy writes (cp.async) of this thread visible to the async proxy (wgmma's reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// D (64 x N, f32) += A (64 x 16) B (N x 16)^T, both bf16 from shared memory through descriptors.
// Thread t of the warpgroup holds d[4 i + 2 h + e] = D[16 (t / 32) + (t % 32) / 4 + 8 h][8 i + 2 (t % 4) + e].
// The accumulator operands of the asm below, eight and sixty-four at a time.
#define BW24_WG_D8(i)                                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define BW24_WG_D64(i)                                                                                     \
  BW24_WG_D8(i), BW24_WG_D8(i + 8), BW24_WG_D8(i + 16), BW24_WG_D8(i + 24), BW24_WG_D8(i + 32), BW24_WG_D8(i + 40), \
      BW24_WG_D8(i + 48), BW24_WG_D8(i + 56)
__device__ __forceinline__ void wgmma_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, 1, 1, 1, 0, 0;\n"
      : BW24_WG_D64(0)
      : "l"(desc_a), "l"(desc_b));
}
__device__ __forceinline__ void wgmma_n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, "
      "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, "
      "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, 1, 1, 1, 0, 0;\n"
      : BW24_WG_D64(0), BW24_WG_D64(64)
      : "l"(desc_a), "l"(desc_b));
}
#undef BW24_WG_D64
#undef BW24_WG_D8
template <int BN>
__device__ __forceinline__ void wgmma_bn(float (&d)[BN / 2], uint64_t da, uint64_t db) {
  if constexpr (BN == 128) wgmma_n128(d, da, db);
  else wgmma_n256(d, da, db);
}
#endif

// The epilogue of a warpgroup's 64 x BN accumulators (token rows m_off.. of the job's tile): thread
// t holds m16n8 fragment i at d[4 i ..], row 16 (t / 32 % 4) + (t % 32) / 4 (+ 8), columns 8 i +
// 2 (t % 4) (+ 1), which store_c writes as it does the mma.sync tiles'.
template <int n>
__device__ __forceinline__ void wg_store(const float (&d)[n], const TileJob& j, int m_off) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const bool pairs = (j.N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < n / 4; ++i) store_c(j, pairs, m_off + 16 * warp + lane / 4, 8 * i + 2 * (lane % 4), d + 4 * i);
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) gemm_wg_kernel(const bf16* __restrict__ a, Segments seg, int64_t M,
                                                                 int64_t K, bool add) {
#if BW24_WGMMA
  extern __shared__ uint4 smem_raw[];
  bf16* sa = reinterpret_cast<bf16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  bf16* sb = sa + C::kStages * C::kTileA;
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * C::kBM, N = pick_field(seg.n, s), ldc = pick_field(seg.ldc, s);
  const bf16* w = reinterpret_cast<const bf16*>(pick_field(seg.w, s));
  float* c = pick_field(seg.c, s);
  pdl_begin();
  const int tid = threadIdx.x, wg = tid / 128;

  // This thread's chunks of a stage: A rows m0 + r (zeros past M), B rows n0 + r (zeros past N).
  constexpr int kAIters = C::kBM * 8 / C::kThreads, kBIters = C::kBN * 8 / C::kThreads;
  const bf16* arow[kAIters];
  const bf16* brow[kBIters];
#pragma unroll
  for (int it = 0; it < kAIters; ++it) {
    const int64_t m = m0 + (tid + it * C::kThreads) / 8;
    arow[it] = m < M ? a + m * K : nullptr;
  }
#pragma unroll
  for (int it = 0; it < kBIters; ++it) {
    const int64_t n = n0 + (tid + it * C::kThreads) / 8;
    brow[it] = n < N ? w + n * K : nullptr;
  }
  auto load_stage = [&](int slot, int kt) {
    const int64_t k0 = int64_t{kt} * C::kBK;
    bf16* ta = sa + slot * C::kTileA;
    bf16* tb = sb + slot * C::kTileB;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * C::kThreads, r = i / 8, ch = i % 8;
      cp_async16(ta + sw128(r, ch), arow[it] ? arow[it] + k0 + 8 * ch : a, arow[it] ? 16 : 0);
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * C::kThreads, r = i / 8, ch = i % 8;
      cp_async16(tb + sw128(r, ch), brow[it] ? brow[it] + k0 + 8 * ch : w, brow[it] ? 16 : 0);
    }
  };

  const int kt_count = static_cast<int>(K / C::kBK);
#pragma unroll
  for (int st = 0; st < C::kAhead; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }
  float acc[C::kBN / 2];
#pragma unroll
  for (int i = 0; i < C::kBN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<C::kAhead - 1>();  // this thread's copies of stage kt landed
    fence_proxy_async();
    __syncthreads();  // everyone's copies of stage kt landed; every warpgroup is done with stage kt - 2
    if (kt + C::kAhead < kt_count) load_stage((kt + C::kAhead) % C::kStages, kt + C::kAhead);
    cp_async_commit();
    const int slot = kt % C::kStages;
    const uint64_t da = wg_desc(sa + slot * C::kTileA + wg * 64 * C::kBK), db = wg_desc(sb + slot * C::kTileB);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C::kBK / 16; ++kk) wgmma_bn<C::kBN>(acc, da + 2 * kk, db + 2 * kk);
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  cp_async_wait<0>();

  // Epilogue: the wgmma accumulator layout (see wgmma_n128) is m16n8 fragments, 4 floats each.
  wg_store(acc, TileJob{nullptr, nullptr, 1, m0, M, nullptr, n0, N, K, c, nullptr, ldc, add}, wg * 64);
#else
  __trap();  // launched only where wgmma_supported() (an sm_90a build on an sm_90 device)
#endif
}

// Whether the wgmma kernel runs here for this K: an sm_90a build on an sm_90 device, whole 64-column stages.
bool wgmma_runs(int64_t k) { return k % 64 == 0 && wgmma_supported(); }

template <class C>
cudaError_t launch_wg(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  static_assert(C::kBK == 64, "wgmma_runs: 64-column stages");
  if (!wgmma_runs(k)) return cudaErrorNotSupported;
  constexpr auto kernel = gemm_wg_kernel<C>;
  BW24_CUDA_TRY(allow_smem<kernel>(C::kSmem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(C::kThreads), C::kSmem, s, a, seg, m, k, add);
}

// ---- sm_90a: the same wgmma tile fed by the tensor memory accelerator ----
// Why: the cp.async kernel above spends its warps' issue slots on the copies (8-12 cp.async and
// their address arithmetic a thread a stage) and a CTA-wide barrier a stage; it measured 390-510
// TFLOP/s. Here one producer thread issues a stage as two TMA tensor copies (A 128 x 64, B BN x
// 64, written in the 128-byte swizzle by the copy engine itself) completed on the stage's `full`
// mbarrier; two consumer warpgroups only wait on it, multiply, and release the slot on its `empty`
// mbarrier once their MMAs of it are done (one wgmma group stays in flight). No CTA barrier in
// the main loop. This is the warp-specialized mainloop of kernels-hopper.md.
//
// The tensor maps (cuTensorMapEncodeTiled through the runtime's driver entry point) are built on
// the host for every launch: A [M][K] and each segment's W [n][K], bf16, boxes of 64 columns (128
// bytes: the swizzle span) by 128 / BN rows, out-of-range rows read as zeros. They travel as
// __grid_constant__ kernel parameters (128 bytes each).
struct TmaMaps {
  CUtensorMap a;
  CUtensorMap b[kMaxGemmSegments];
};

template <int BN, int Stages>
struct TmaTiles {
  static constexpr int kBM = 128, kBN = BN, kStages = Stages, kThreads = 384;  // producer + 2 consumer warpgroups
  static constexpr int kTileA = kBM * 64, kTileB = BN * 64;                    // bf16 elements
  static constexpr uint32_t kStageBytes = (kTileA + kTileB) * 2;
  static constexpr size_t kSmem = size_t{Stages} * kStageBytes + 2 * Stages * sizeof(uint64_t) + 1024;
  static_assert(BN == 128 || BN == 256, "wgmma_n128 / wgmma_n256");
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) gemm_tma_kernel(const __grid_constant__ TmaMaps maps, Segments seg,
                                                                  int64_t M, int64_t K, bool add) {
#if BW24_WGMMA
  extern __shared__ uint4 smem_raw[];
  bf16* sa = reinterpret_cast<bf16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  bf16* sb = sa + C::kStages * C::kTileA;
  uint64_t* full = reinterpret_cast<uint64_t*>(sb + C::kStages * C::kTileB);
  uint64_t* empty = full + C::kStages;
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * C::kBM;
  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    for (int i = 0; i < C::kStages; ++i) {
      mbar_init(&full[i], 1);   // the producer's arrive.expect_tx; the bytes complete the phase
      mbar_init(&empty[i], 2);  // one arrival a consumer warpgroup
    }
    mbar_init_fence();
  }
  __syncthreads();
  pdl_begin();  // A is the previous kernel's output
  const int kt_count = static_cast<int>(K / 64);
  if (wg == 0) {  // producer: one thread issues every stage
    if (tid == 0) {
      const CUtensorMap* mb = s == 0 ? &maps.b[0] : s == 1 ? &maps.b[1] : &maps.b[2];
      for (int kt = 0; kt < kt_count; ++kt) {
        const int slot = kt % C::kStages;
        if (kt >= C::kStages) mbar_wait(&empty[slot], ((kt / C::kStages) - 1) & 1);  // its last use released
        mbar_arrive_expect_tx(&full[slot], C::kStageBytes);
        tensor_copy_2d(sa + slot * C::kTileA, &maps.a, 64 * kt, static_cast<int>(m0), &full[slot]);
        tensor_copy_2d(sb + slot * C::kTileB, mb, 64 * kt, static_cast<int>(n0), &full[slot]);
      }
    }
    return;  // no CTA barrier follows
  }
  const int cw = wg - 1;  // consumer warpgroup: token rows m0 + 64 cw .. + 63, all BN columns
  float acc[C::kBN / 2];
#pragma unroll
  for (int i = 0; i < C::kBN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < kt_count; ++kt) {
    const int slot = kt % C::kStages;
    mbar_wait(&full[slot], (kt / C::kStages) & 1);
    const uint64_t da = wg_desc(sa + slot * C::kTileA + cw * 64 * 64), db = wg_desc(sb + slot * C::kTileB);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wgmma_bn<C::kBN>(acc, da + 2 * kk, db + 2 * kk);
    wgmma_commit();
    wgmma_wait<1>();  // stage kt - 1's MMAs are done: its slot may be refilled
    if (kt > 0 && tid % 128 == 0) mbar_arrive(&empty[(kt - 1) % C::kStages]);
  }
  wgmma_wait<0>();

  const int64_t N = pick_field(seg.n, s);
  wg_store(acc, TileJob{nullptr, nullptr, 1, m0, M, nullptr, n0, N, K, pick_field(seg.c, s), nullptr,
                        pick_field(seg.ldc, s), add}, cw * 64);
#else
  __trap();  // launched only where wgmma_supported() (an sm_90a build on an sm_90 device)
#endif
}

// cuTensorMapEncodeTiled from the driver, through the runtime (no libcuda link); null if absent.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
EncodeTiledFn encode_tiled() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiledFn>(nullptr);
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

// The map of a bf16 [rows][cols] row-major matrix read in boxes of 64 columns x box_rows rows, in
// the 128-byte swizzle; false if the driver refuses it (alignment, sizes).
bool encode_bf16_2d(CUtensorMap* map, const void* base, int64_t cols, int64_t rows, int box_rows) {
  const EncodeTiledFn fn = encode_tiled();
  if (!fn) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)}, elem[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, elem,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <class C>
cudaError_t launch_tma(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  if (!wgmma_runs(k) || m > INT32_MAX) return cudaErrorNotSupported;
  // A map the driver refuses (no entry point, a base it cannot take): the cp.async-fed kernel of
  // the same tile instead.
  using Fallback = WgTiles<C::kBN, C::kBN == 128 ? 5 : 4>;
  TmaMaps maps;
  bool encoded = encode_bf16_2d(&maps.a, a, k, m, C::kBM);
  for (int i = 0; encoded && i < seg.count; ++i) encoded = encode_bf16_2d(&maps.b[i], seg.w[i], k, seg.n[i], C::kBN);
  if (!encoded) return launch_wg<Fallback>(a, seg, m, k, add, s);
  for (int i = seg.count; i < kMaxGemmSegments; ++i) maps.b[i] = maps.b[0];  // unused: never read, kept defined
  constexpr auto kernel = gemm_tma_kernel<C>;
  BW24_CUDA_TRY(allow_smem<kernel>(C::kSmem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(C::kThreads), C::kSmem, s, maps, seg, m, k, add);
}

// The dispatch table of the GEMM family. Microbenchmarks (bw24-microbench gemm_bf16_config, Qwen3-8B
// shapes at M = 512) chose the entries and the rule in pick(). Dense GEMMs take bf16 weights only:
// the fused expansion measured slower there (lib/engine/cuda_runner.cpp fused_type).
struct Config {
  const char* name;
  int bm, bn;
  cudaError_t (*launch)(const bf16*, const Segments&, int64_t, int64_t, bool, cudaStream_t);
  bool wgmma;  // runs where wgmma_runs(K)
};
constexpr Config kConfigs[] = {
    {"64x128 warps 2x4 (32x32) 4 stages", 64, 128, launch<Tiles<64, 128, 2, 4, 4>, LoadBf16>, false},
    {"128x128 warps 2x4 (64x32) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 4, 4>, LoadBf16>, false},
    {"128x128 warps 2x2 (64x64) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 2, 4>, LoadBf16>, false},
    {"128x256 warps 2x4 (64x64) 3 stages", 128, 256, launch<Tiles<128, 256, 2, 4, 3>, LoadBf16>, false},
    {"256x128 warps 4x2 (64x64) 3 stages", 256, 128, launch<Tiles<256, 128, 4, 2, 3>, LoadBf16>, false},
    {"wgmma 128x128 5 stages", 128, 128, launch_wg<WgTiles<128, 5>>, true},
    {"wgmma 128x256 4 stages", 128, 256, launch_wg<WgTiles<256, 4>>, true},
    {"wgmma TMA 128x128 6 stages", 128, 128, launch_tma<TmaTiles<128, 6>>, true},
    {"wgmma TMA 128x256 4 stages", 128, 256, launch_tma<TmaTiles<256, 4>>, true},
};
constexpr int kConfigCount = sizeof(kConfigs) / sizeof(kConfigs[0]);

// On sm_90 (M > 64, K % 64 == 0) the TMA-fed wgmma kernel: 128 x 256 tiles where they still make
// ~0.7 of a wave, else 128 x 128 (fewer, wider CTAs beat a second partial wave). Measured on the
// H200 at a2623eb (cp.async rows) and a6acec4 (TMA rows) (M = 512 unless noted; us; N x K):
//   config                      6144x4096  4096x4096  24576x4096  4096x12288  M=2048 4096x4096
//   mma.sync 128x128 (64x64)      95.6       66.2       305         181          202
//   wgmma 128x128, 5 stages       74.8       40.4       236         113          155
//   wgmma 128x128, 3 stages x2    80.5       70.8       251         193          161   (2 CTAs a SM; dropped)
//   wgmma 128x256, 4 stages       64.5       64.0       207         167          135
//   TMA 128x128, 6 stages         57.6       33.2        -           -            -
//   pick (TMA; 8 | 7 | 8 | 7 | 8) 52.4       33.0       171        90.2          108   (492-634 TFLOP/s)
// Elsewhere 64-token tiles when 128-token tiles would leave half the SMs idle (small M or narrow
// N); else 128 x 128 with four 64 x 64 warps. Measured on the H200 at 147640f1 (us):
//   config                      6144x4096  4096x4096  24576x4096  4096x12288  M=2048 4096x4096
//   64x128, 2x4 warps             98.8       67.3       383         192          251
//   128x128, 2x4 warps (64x32)    94.2       66.5       296         180          196
//   128x128, 2x2 warps (64x64)    90.1       66.2       282         181          186   <- default
//   128x256 / 256x128, 64x64     ~122       121        ~356        344          240   (64 CTAs: 1/SM)
// The 64x64 warp tile issues 8 ldmatrix per 32 mma (64x32: 6 per 16).
int pick(int64_t m, int64_t n_total, int64_t k) {
  const int64_t m_tiles = (m + 127) / 128;
  if (m > 64 && wgmma_runs(k))
    return 10 * m_tiles * ((n_total + 255) / 256) >= 7 * sm_count() ? 8 : 7;
  const int64_t ctas128 = m_tiles * ((n_total + 127) / 128);
  return (m <= 64 || 2 * ctas128 < sm_count()) ? 0 : 2;
}

}  // namespace

bool gemm_fused_supports(uint32_t t) { return t == kQ4_K || t == kQ6_K; }

int gemm_bf16_config_count() { return kConfigCount; }
const char* gemm_bf16_config_name(int config) {
  return config >= 0 && config < kConfigCount ? kConfigs[config].name : "?";
}
bool gemm_bf16_config_runs(int config, int64_t k) {
  return config < 0 || (config < kConfigCount && (!kConfigs[config].wgmma || wgmma_runs(k)));
}

cudaError_t gemm_bf16(const bf16* a, const bf16* w, float* c, int64_t m, int64_t n, int64_t k, int64_t ldc, GemvOut out,
                      cudaStream_t s, int config) {
  const GemmSegment seg{w, c, n, ldc};
  return gemm_bf16_multi(a, &seg, 1, m, k, out, s, config);
}

cudaError_t gemm_bf16_multi(const bf16* a, const GemmSegment* segs, int n_segs, int64_t m, int64_t k, GemvOut out,
                            cudaStream_t s, int config) {
  if (m <= 0) return cudaSuccess;
  if (k <= 0 || k % kBK != 0 || n_segs < 1 || n_segs > kMaxGemmSegments || out == GemvOut::kGateUp ||
      config >= kConfigCount)
    return cudaErrorInvalidValue;
  int64_t n_total = 0;
  for (int i = 0; i < n_segs; ++i) n_total += segs[i].n;
  const Config& cfg = kConfigs[config >= 0 ? config : pick(m, n_total, k)];
  Segments seg;
  if (!make_segments(segs, n_segs, cfg.bn, &seg)) return cudaErrorInvalidValue;
  return cfg.launch(a, seg, m, k, out == GemvOut::kAdd, s);
}

cudaError_t gemm_grouped(const bf16* a, const GemmSegment* segs, int n_segs, uint32_t w_type, const GemmGroups& groups,
                         int64_t max_rows, int64_t k, GemvOut out, cudaStream_t s) {
  if (max_rows <= 0 || groups.e1 <= groups.e0) return cudaSuccess;
  Segments seg;
  if (k <= 0 || k % kBK != 0 || out == GemvOut::kGateUp || groups.e0 < 0 || groups.a_div < 0 ||
      (w_type != kBF16 && k % 256 != 0) || !make_segments(segs, n_segs, GroupedTiles::kBN, &seg))
    return cudaErrorInvalidValue;
  const bool add = out == GemvOut::kAdd;
  switch (w_type) {
    case kBF16: return launch_grouped<LoadBf16>(a, seg, groups, max_rows, k, add, s);
    case kQ4_K: return launch_grouped<LoadQ4K>(a, seg, groups, max_rows, k, add, s);
    case kQ6_K: return launch_grouped<LoadQ6K>(a, seg, groups, max_rows, k, add, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
