// KV cache elements (f32 or f16) into f32 registers, shared by the flash kernels: aligned vector
// loads, one conversion per pair for f16.
#pragma once

#include <cuda_fp16.h>

namespace bw24::cuda {

// 8 consecutive elements (p 16-byte aligned for f16, 32 for f32).
__device__ __forceinline__ void load8(const float* p, float (&v)[8]) {
  const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void load8(const __half* p, float (&v)[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
}

// n consecutive elements, n even (pairs: p 8-byte aligned for f32, 4 for f16).
template <int n>
__device__ __forceinline__ void load_pairs(const float* p, float (&v)[n]) {
#pragma unroll
  for (int e = 0; e < n; e += 2) {
    const float2 x = *reinterpret_cast<const float2*>(p + e);
    v[e] = x.x;
    v[e + 1] = x.y;
  }
}
template <int n>
__device__ __forceinline__ void load_pairs(const __half* p, float (&v)[n]) {
#pragma unroll
  for (int e = 0; e < n; e += 2) {
    const float2 x = __half22float2(*reinterpret_cast<const __half2*>(p + e));
    v[e] = x.x;
    v[e + 1] = x.y;
  }
}

}  // namespace bw24::cuda
