// KV cache elements (f32, f16 or q8_0) into f32 registers, shared by the flash kernels: aligned
// vector loads, one conversion per pair for f16, one scale per load for q8_0. The kernels take the
// cache as a pointer-like value: `kc + i` addresses element i for all three.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

namespace bw24::cuda {

// A q8_0 cache (cuda/ops/ops.cuh KvDtype::kQ8_0: quants, then the f16 scale plane) positioned at
// element e. Loads of 8 (load8) or n (load_pairs) elements start at multiples of 8 / n, so they
// never straddle a block of 32 and take one scale.
struct KvQ8 {
  const int8_t* q;
  const __half* d;
  int64_t e;
  __device__ __forceinline__ KvQ8 operator+(int64_t o) const { return {q, d, e + o}; }
};
// The q8_0 cache at `cache` holding n_ctx positions of kvw elements, at element 0.
inline KvQ8 kv_q8(const void* cache, int64_t n_ctx, int64_t kvw) {
  const int8_t* q = static_cast<const int8_t*>(cache);
  return KvQ8{q, reinterpret_cast<const __half*>(q + n_ctx * kvw), 0};
}

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

__device__ __forceinline__ void load8(const KvQ8& p, float (&v)[8]) {
  const int2 raw = *reinterpret_cast<const int2*>(p.q + p.e);
  const int8_t* b = reinterpret_cast<const int8_t*>(&raw);
  const float s = __half2float(p.d[p.e >> 5]);
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = s * b[i];
}
template <int n>
__device__ __forceinline__ void load_pairs(const KvQ8& p, float (&v)[n]) {
  const float s = __half2float(p.d[p.e >> 5]);
#pragma unroll
  for (int e = 0; e < n; e += 2) {
    const char2 c = *reinterpret_cast<const char2*>(p.q + p.e + e);
    v[e] = s * c.x;
    v[e + 1] = s * c.y;
  }
}

}  // namespace bw24::cuda
