// What the prefill GEMM's kernels share (gemm.cu: bf16 tiles and wgmma; gemm_q8.cu: the int8 grouped
// GEMMs): the segment table of a launch (up to three matrices side by side in one grid), a CTA's
// tile job, the one epilogue that writes C fragments, and the bf16 tile swizzle. Internal to
// cuda/gemm; the entry points are gemm.cuh's.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "cuda/gemm/gemm.cuh"

namespace bw24::cuda::gemm_detail {

constexpr int kBK = 32;

// Element offset of (row, 16-byte chunk) in a [rows][kBK] tile.
__device__ __forceinline__ int swz(int row, int chunk) { return row * kBK + ((chunk ^ ((row >> 1) & 3)) << 3); }

// The matrices of one launch; column tile y belongs to the first segment whose tile_end exceeds y.
struct Segments {
  const uint8_t* w[kMaxGemmSegments];
  float* c[kMaxGemmSegments];
  int64_t n[kMaxGemmSegments], ldc[kMaxGemmSegments], w_stride[kMaxGemmSegments];
  unsigned tile_end[kMaxGemmSegments];
  int count;
};
static_assert(kMaxGemmSegments == 3, "the kernel selects among three segments");

// One CTA's work: the C tile [m0, min(m0 + kBM, m_end)) x [n0, n0 + kBN) of the product with w
// [N][K]; A rows as ARows resolves them; C row m at c + (c_index ? c_index[m] : m) * ldc.
struct TileJob {
  const bf16* a;
  const int32_t* a_index;
  int a_div;
  int64_t m0, m_end;
  const uint8_t* w;
  int64_t n0, N, K;
  float* c;
  const int32_t* c_index;
  int64_t ldc;
  bool add;
};

// The epilogue of every tile: a lane's four accumulators of one m16n8 C fragment, v0, v1 at (mi,
// ni), (mi, ni + 1) and v2, v3 eight rows down, relative to the job's (m0, n0); rows at or past
// m_end and columns past N skipped, C row m at c_index[m] when scattered. A column pair goes out as
// one float2 where N and ldc are even (the usual case), else as single floats (the shared expert's
// one-row gate).
// pairs: (j.N % 2 == 0) && (j.ldc % 2 == 0), decided once by the caller.
__device__ __forceinline__ void store_c(const TileJob& j, bool pairs, int mi, int ni, const float* v) {
  const int64_t n = j.n0 + ni;
  if (n >= j.N) return;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t m = j.m0 + mi + 8 * h;
    if (m >= j.m_end) continue;
    float* dst = j.c + (j.c_index ? j.c_index[m] : m) * j.ldc + n;
    float v0 = v[2 * h], v1 = v[2 * h + 1];
    if (pairs) {
      float2* d2 = reinterpret_cast<float2*>(dst);
      if (j.add) {
        const float2 old = *d2;
        v0 += old.x;
        v1 += old.y;
      }
      *d2 = make_float2(v0, v1);
    } else {
      dst[0] = j.add ? dst[0] + v0 : v0;
      if (n + 1 < j.N) dst[1] = j.add ? dst[1] + v1 : v1;
    }
  }
}

// The segment of column tile y, by selects, not by a dynamic index (which copies the parameter
// struct to the stack); *n0 its first weight row.
__device__ __forceinline__ int segment_of(const Segments& seg, unsigned y, int64_t bn, int64_t* n0) {
  const int s = (seg.count > 1 && y >= seg.tile_end[0]) + (seg.count > 2 && y >= seg.tile_end[1]);
  *n0 = static_cast<int64_t>(y - (s == 0 ? 0 : s == 1 ? seg.tile_end[0] : seg.tile_end[1])) * bn;
  return s;
}
template <typename T>
__device__ __forceinline__ T pick_field(const T (&field)[kMaxGemmSegments], int s) {
  return s == 0 ? field[0] : s == 1 ? field[1] : field[2];
}

// The segment table of a launch with column tiles of bn rows; false if a segment is malformed.
inline bool make_segments(const GemmSegment* segs, int n_segs, int64_t bn, Segments* seg) {
  if (n_segs < 1 || n_segs > kMaxGemmSegments) return false;
  *seg = Segments{};
  unsigned tiles = 0;
  for (int i = 0; i < n_segs; ++i) {
    const GemmSegment& g = segs[i];
    // 16-byte copies: weights and the stride between experts 16-byte aligned.
    if (g.n <= 0 || g.ldc < g.n || g.w_stride < 0 || g.w_stride % 16 != 0 || reinterpret_cast<uintptr_t>(g.w) % 16 != 0)
      return false;
    seg->w[i] = static_cast<const uint8_t*>(g.w);
    seg->c[i] = g.c;
    seg->n[i] = g.n;
    seg->ldc[i] = g.ldc;
    seg->w_stride[i] = g.w_stride;
    tiles += static_cast<unsigned>((g.n + bn - 1) / bn);
    seg->tile_end[i] = tiles;
  }
  seg->count = n_segs;
  return true;
}

}  // namespace bw24::cuda::gemm_detail
