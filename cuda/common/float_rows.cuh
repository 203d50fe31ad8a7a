// The inner step of the float-weight GEMVs (cuda/gemv gemv_v2, cuda/moe moe_gate): one 16-byte
// weight load widened to f32 and dotted with each token's activations.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

namespace bw24::cuda {

// The 16 bytes v as f32 weights: 4 F32 (kElemBytes 4), or 8 BF16 / F16 (kElemBytes 2; bf16 when kBf16).
template <int kElemBytes, bool kBf16>
__device__ __forceinline__ void widen16(const uint4& v, float (&w)[16 / kElemBytes]) {
  if constexpr (kElemBytes == 4) {
    const float4 f = *reinterpret_cast<const float4*>(&v);
    w[0] = f.x, w[1] = f.y, w[2] = f.z, w[3] = f.w;
  } else {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(&v);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      w[k] = kBf16 ? __uint_as_float(static_cast<unsigned>(h[k]) << 16) : __half2float(__ushort_as_half(h[k]));
  }
}

// acc[t] += w . x[t * cols + c ..< + kPer] for each of nt tokens (float4 loads through the
// read-only path; c a multiple of 4).
template <int kPer, int nt>
__device__ __forceinline__ void dot_tokens(const float (&w)[kPer], const float* __restrict__ x, int64_t cols,
                                           int64_t c, float (&acc)[nt]) {
#pragma unroll
  for (int t = 0; t < nt; ++t) {
    const float4* xt = reinterpret_cast<const float4*>(x + t * cols + c);
#pragma unroll
    for (int k4 = 0; k4 < kPer / 4; ++k4) {
      const float4 xa = __ldg(xt + k4);
      acc[t] += w[4 * k4] * xa.x + w[4 * k4 + 1] * xa.y + w[4 * k4 + 2] * xa.z + w[4 * k4 + 3] * xa.w;
    }
  }
}

}  // namespace bw24::cuda
