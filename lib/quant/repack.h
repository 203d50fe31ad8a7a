// Kernel-native device layouts. A format whose blocks are not a multiple of 16 bytes (Q8_0: 34 B,
// Q6_K: 210 B, Q4_0: 18 B, ...) cannot be read with aligned 16-byte loads in its file layout. On
// upload such a tensor is split into planes: every block's field f is stored in plane f, planes
// one after another, blocks in file order inside each plane. Same bytes, same total size; the
// repack is a bijection (to_planes / from_planes round-trip, tests/unit/test_quant.cpp).
//
//   Q8_0 [d | qs[32]]                    -> qs plane (N x 32 B) | d plane (N x 2 B)
//   Q6_K [ql[128] | qh[64] | sc[16] | d] -> ql | qh | sc | d
//   Q4_0 [d | qs[16]]                    -> qs | d
//   Q4_1 [d m | qs[16]]                  -> qs | dm
//   Q5_0 [d | qh[4] | qs[16]]            -> qs | qh | d
//   Q5_1 [d m | qh[4] | qs[16]]          -> qs | qh | dm
//   IQ4_XS [d sh sl[4] | qs[128]]        -> qs | (d, scales_h, scales_l)
// Plane p starts at N * (bytes of the planes before it): with N blocks, a plane of 16-byte fields
// is 16-byte aligned, the rest is aligned to its field size. With tiles (below), the same within each
// tile.
#pragma once

#include <cstdint>
#include <span>

namespace bw24::quant {

struct PlaneField {
  uint16_t offset;  // in the file block
  uint16_t bytes;
};

struct PlaneLayout {
  uint32_t type;                // ggml type id
  uint16_t block_bytes;
  std::span<const PlaneField> fields;  // in plane order
};

// nullptr: the type keeps its file layout on the device.
const PlaneLayout* plane_layout(uint32_t ggml_type);

// n_blocks blocks of `layout` between file order (src) and plane order (dst); src != dst. The planes
// are cut by tiles of tile_blocks consecutive blocks (0: one tile, the n_blocks), each tile its own
// planes, tiles in turn (a divisor of n_blocks): the device's Q6_K takes a tile per row piece of the
// streamed GEMV (cuda/common/q6k_tiles.cuh says which).
void to_planes(const PlaneLayout& layout, const uint8_t* src, int64_t n_blocks, uint8_t* dst, int64_t tile_blocks = 0);
void from_planes(const PlaneLayout& layout, const uint8_t* src, int64_t n_blocks, uint8_t* dst, int64_t tile_blocks = 0);

}  // namespace bw24::quant
