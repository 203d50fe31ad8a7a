#include "lib/quant/repack.h"

#include <algorithm>
#include <cstring>

namespace bw24::quant {
namespace {

constexpr PlaneField kQ8_0[] = {{2, 32}, {0, 2}};
constexpr PlaneField kQ6_K[] = {{0, 128}, {128, 64}, {192, 16}, {208, 2}};
constexpr PlaneField kQ4_0[] = {{2, 16}, {0, 2}};
constexpr PlaneField kQ4_1[] = {{4, 16}, {0, 4}};
constexpr PlaneField kQ5_0[] = {{6, 16}, {2, 4}, {0, 2}};
constexpr PlaneField kQ5_1[] = {{8, 16}, {4, 4}, {0, 4}};
constexpr PlaneField kIQ4_XS[] = {{8, 128}, {0, 8}};

// ggml ids: Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8, Q6_K 14, IQ4_XS 23. (Q4_K 144 B and Q5_K 176 B
// blocks are 16-byte multiples: file layout.)
constexpr PlaneLayout kLayouts[] = {
    {8, 34, kQ8_0}, {14, 210, kQ6_K}, {2, 18, kQ4_0}, {3, 20, kQ4_1}, {6, 22, kQ5_0}, {7, 24, kQ5_1},
    {23, 136, kIQ4_XS},
};

}  // namespace

const PlaneLayout* plane_layout(uint32_t type) {
  for (const PlaneLayout& l : kLayouts)
    if (l.type == type) return &l;
  return nullptr;
}

namespace {
void to_planes_one(const PlaneLayout& l, const uint8_t* src, int64_t n, uint8_t* dst) {
  uint64_t plane = 0;  // byte offset of the current plane
  for (const PlaneField& f : l.fields) {
    for (int64_t b = 0; b < n; ++b) std::memcpy(dst + plane + uint64_t(b) * f.bytes, src + uint64_t(b) * l.block_bytes + f.offset, f.bytes);
    plane += uint64_t(n) * f.bytes;
  }
}

void from_planes_one(const PlaneLayout& l, const uint8_t* src, int64_t n, uint8_t* dst) {
  uint64_t plane = 0;
  for (const PlaneField& f : l.fields) {
    for (int64_t b = 0; b < n; ++b) std::memcpy(dst + uint64_t(b) * l.block_bytes + f.offset, src + plane + uint64_t(b) * f.bytes, f.bytes);
    plane += uint64_t(n) * f.bytes;
  }
}
}  // namespace

void to_planes(const PlaneLayout& l, const uint8_t* src, int64_t n, uint8_t* dst, int64_t tile) {
  if (tile <= 0 || tile > n) tile = n;
  for (int64_t t = 0; t < n; t += tile) {
    const uint64_t at = uint64_t(t) * l.block_bytes;
    to_planes_one(l, src + at, std::min(tile, n - t), dst + at);
  }
}

void from_planes(const PlaneLayout& l, const uint8_t* src, int64_t n, uint8_t* dst, int64_t tile) {
  if (tile <= 0 || tile > n) tile = n;
  for (int64_t t = 0; t < n; t += tile) {
    const uint64_t at = uint64_t(t) * l.block_bytes;
    from_planes_one(l, src + at, std::min(tile, n - t), dst + at);
  }
}

}  // namespace bw24::quant
