// Weight expansion to bf16 for the prefill GEMM (cuda/gemm/gemm.cuh): one thread per group of 32
// consecutive weights of a row (a legacy block, a K-quant sub-block, 32 F16/BF16 values), four
// 16-byte stores. Bytes: the quantized row in, 2 bytes per weight out; bandwidth bound, ~35 us
// for a 4096 x 12288 Q4_K matrix on the H200.
//
// Layouts as the int8 GEMV reads them (cuda/gemv/gemv_q8.cu, lib/quant/repack.h): planes for
// Q4_0, Q4_1, Q5_0, Q8_0, Q6_K (plane p of a tensor of N blocks starts at N * bytes before it),
// file layout for Q4_K. gb = row * blocks_per_row + block indexes a block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/gemm/gemm.cuh"

namespace bw24::cuda {
namespace {

enum : uint32_t { kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14, kBF16 = 30 };

// 16 bytes at p into b[16] (p 16-byte aligned).
__device__ __forceinline__ void load16(const uint8_t* p, uint8_t* b) {
  *reinterpret_cast<uint4*>(b) = __ldg(reinterpret_cast<const uint4*>(p));
}

// Each format: kBlockElems, and group(w, n_blocks, gb, sub, v): the 32 weights of sub-group `sub`
// (elements [32 sub, 32 sub + 32) of block gb) as floats.
struct Q4_0 {  // qs[16] | d. Byte j: element j (low nibble), j + 16 (high). w = (q - 8) d
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t n, int64_t gb, int, float* v) {
    alignas(16) uint8_t qs[16];
    load16(w + gb * 16, qs);
    const float d = half_at(w + n * 16 + gb * 2);
    for (int j = 0; j < 16; ++j) {
      v[j] = d * ((qs[j] & 15) - 8);
      v[j + 16] = d * ((qs[j] >> 4) - 8);
    }
  }
};

struct Q4_1 {  // qs[16] | (d, m). w = q d + m
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t n, int64_t gb, int, float* v) {
    alignas(16) uint8_t qs[16];
    load16(w + gb * 16, qs);
    const float d = half_at(w + n * 16 + gb * 4), m = half_at(w + n * 16 + gb * 4 + 2);
    for (int j = 0; j < 16; ++j) {
      v[j] = d * (qs[j] & 15) + m;
      v[j + 16] = d * (qs[j] >> 4) + m;
    }
  }
};

struct Q5_0 {  // qs[16] | qh (u32, bit j = fifth bit of element j) | d. w = (q - 16) d
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t n, int64_t gb, int, float* v) {
    alignas(16) uint8_t qs[16];
    load16(w + gb * 16, qs);
    const uint32_t qh = __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb);
    const float d = half_at(w + n * 20 + gb * 2);
    for (int j = 0; j < 16; ++j) {
      v[j] = d * (static_cast<int>((qs[j] & 15) | (((qh >> j) & 1) << 4)) - 16);
      v[j + 16] = d * (static_cast<int>((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16);
    }
  }
};

struct Q8_0 {  // qs[32] | d. w = q d
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t n, int64_t gb, int, float* v) {
    alignas(16) int8_t qs[32];
    load16(w + gb * 32, reinterpret_cast<uint8_t*>(qs));
    load16(w + gb * 32 + 16, reinterpret_cast<uint8_t*>(qs) + 16);
    const float d = half_at(w + n * 32 + gb * 2);
    for (int j = 0; j < 32; ++j) v[j] = d * qs[j];
  }
};

// Q4_K file layout [d, dmin | scales[12] | qs[128]]: sub-block s = 2c + h holds qs[32c + l]'s low
// (h = 0) or high (h = 1) nibbles; w = d sc_s q - dmin m_s.
struct Q4_K {
  static constexpr int kBlockElems = 256;
  __device__ static void group(const uint8_t* w, int64_t, int64_t gb, int s, float* v) {
    const uint8_t* blk = w + gb * 144;
    alignas(16) uint8_t head[16], qs[32];
    load16(blk, head);
    load16(blk + 16 + 32 * (s / 2), qs);
    load16(blk + 32 + 32 * (s / 2), qs + 16);
    const uint8_t* sc = head + 4;
    int scale, mn;
    if (s < 4) {
      scale = sc[s] & 63;
      mn = sc[s + 4] & 63;
    } else {
      scale = (sc[s + 4] & 0xF) | ((sc[s - 4] >> 6) << 4);
      mn = (sc[s + 4] >> 4) | ((sc[s] >> 6) << 4);
    }
    const float d = half_at(head) * scale, m = half_at(head + 2) * mn;
    const int shift = 4 * (s % 2);
    for (int l = 0; l < 32; ++l) v[l] = d * ((qs[l] >> shift) & 15) - m;
  }
};

// Q6_K planes ql[128] | qh[64] | scales[16] (int8) | d. Sub-group s = 4 half + j covers elements
// 128 half + 32 j + l: low 4 bits from ql[64 half + 32 (j & 1) + l] (nibble j / 2), top two from
// qh[32 half + l] bits 2j; scale index 8 half + 2j + l / 16; w = d sc (q - 32).
struct Q6_K {
  static constexpr int kBlockElems = 256;
  __device__ static void group(const uint8_t* w, int64_t n, int64_t gb, int s, float* v) {
    const int half = s / 4, j = s % 4;
    alignas(16) uint8_t ql[32], qh[32];
    const uint8_t* pl = w + gb * 128 + 64 * half + 32 * (j & 1);
    const uint8_t* ph = w + n * 128 + gb * 64 + 32 * half;
    load16(pl, ql);
    load16(pl + 16, ql + 16);
    load16(ph, qh);
    load16(ph + 16, qh + 16);
    const int8_t* sc = reinterpret_cast<const int8_t*>(w + n * 192) + gb * 16 + 8 * half + 2 * j;
    const float d = half_at(w + n * 208 + gb * 2);
    const float d0 = d * sc[0], d1 = d * sc[1];
    for (int l = 0; l < 32; ++l) {
      const int q = ((ql[l] >> (4 * (j / 2))) & 15) | (((qh[l] >> (2 * j)) & 3) << 4);
      v[l] = (l < 16 ? d0 : d1) * (q - 32);
    }
  }
};

struct F16 {
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t, int64_t gb, int, float* v) {
    const __half* p = reinterpret_cast<const __half*>(w) + gb * 32;
    for (int j = 0; j < 32; ++j) v[j] = __half2float(p[j]);
  }
};

struct BF16 {
  static constexpr int kBlockElems = 32;
  __device__ static void group(const uint8_t* w, int64_t, int64_t gb, int, float* v) {
    const bf16* p = reinterpret_cast<const bf16*>(w) + gb * 32;
    for (int j = 0; j < 32; ++j) v[j] = __bfloat162float(p[j]);
  }
};

template <class F>
__global__ void dequant_kernel(const uint8_t* w, int64_t rows, int64_t cols, int64_t row0, int64_t n_groups, bf16* out) {
  pdl_begin();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_groups) return;
  constexpr int kGroups = F::kBlockElems / 32;
  const int64_t groups_per_row = cols / 32, blocks = cols / F::kBlockElems;
  const int64_t r = i / groups_per_row, g = i % groups_per_row;
  float v[32];
  F::group(w, rows * blocks, (row0 + r) * blocks + g / kGroups, static_cast<int>(g % kGroups), v);
  alignas(16) bf16 b[32];
#pragma unroll
  for (int j = 0; j < 32; ++j) b[j] = __float2bfloat16_rn(v[j]);
  uint4* dst = reinterpret_cast<uint4*>(out + r * cols + 32 * g);
#pragma unroll
  for (int j = 0; j < 4; ++j) dst[j] = reinterpret_cast<const uint4*>(b)[j];
}

template <class F>
cudaError_t launch(const void* w, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows, bf16* out, cudaStream_t s) {
  if (cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  const int64_t groups = n_rows * (cols / 32);
  constexpr int kThreads = 256;
  return launch_pdl(dequant_kernel<F>, dim3(static_cast<unsigned>((groups + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                    s, static_cast<const uint8_t*>(w), rows, cols, row0, groups, out);
}

}  // namespace

bool gemm_supports(uint32_t t) {
  return t == kF16 || t == kBF16 || t == kQ4_0 || t == kQ4_1 || t == kQ5_0 || t == kQ8_0 || t == kQ4_K || t == kQ6_K;
}

// The dispatch table of the expansion: one entry per format.
cudaError_t dequant_bf16(const void* w, uint32_t type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows,
                         bf16* out, cudaStream_t s) {
  if (n_rows <= 0) return cudaSuccess;
  if (row0 < 0 || row0 + n_rows > rows || cols <= 0) return cudaErrorInvalidValue;
  switch (type) {
    case kF16: return launch<F16>(w, rows, cols, row0, n_rows, out, s);
    case kBF16: return launch<BF16>(w, rows, cols, row0, n_rows, out, s);
    case kQ4_0: return launch<Q4_0>(w, rows, cols, row0, n_rows, out, s);
    case kQ4_1: return launch<Q4_1>(w, rows, cols, row0, n_rows, out, s);
    case kQ5_0: return launch<Q5_0>(w, rows, cols, row0, n_rows, out, s);
    case kQ8_0: return launch<Q8_0>(w, rows, cols, row0, n_rows, out, s);
    case kQ4_K: return launch<Q4_K>(w, rows, cols, row0, n_rows, out, s);
    case kQ6_K: return launch<Q6_K>(w, rows, cols, row0, n_rows, out, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
