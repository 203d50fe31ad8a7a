// KV cache elements (cuda/ops/ops.cuh KvDtype) into f32 registers, shared by the flash kernels and
// attention v1: aligned vector loads, one conversion per pair for f16 / bf16, one scale per load
// for q8_0 / q4_0, a bit-exact decode for fp8. The kernels take the cache as a pointer-like value:
// `kc + i` addresses element i for every type.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/ops/ops.cuh"

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

// A q4_0 cache (KvDtype::kQ4_0: element-order nibbles, then the f16 scale plane) at element e.
struct KvQ4 {
  const uint8_t* q;
  const __half* d;
  int64_t e;
  __device__ __forceinline__ KvQ4 operator+(int64_t o) const { return {q, d, e + o}; }
};
inline KvQ4 kv_q4(const void* cache, int64_t n_ctx, int64_t kvw) {
  const uint8_t* q = static_cast<const uint8_t*>(cache);
  return KvQ4{q, reinterpret_cast<const __half*>(q + n_ctx * kvw / 2), 0};
}

// An fp8 (e4m3) cache at element e.
struct KvFp8 {
  const uint8_t* p;
  int64_t e;
  __device__ __forceinline__ KvFp8 operator+(int64_t o) const { return {p, e + o}; }
};

// e4m3 byte to float exactly as lib/core's fp8_e4m3_to_f32: 0x7f / 0xff NaN, exponent 0
// subnormal (m 2^-9), else (1 + m / 8) 2^(exp - 7), built from bits.
__device__ __forceinline__ float fp8_e4m3_value(uint8_t b) {
  const uint32_t exp = (b >> 3) & 15, mant = b & 7, sign = static_cast<uint32_t>(b & 0x80) << 24;
  if (exp == 15 && mant == 7) return __uint_as_float(0x7fc00000u | sign);
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 0.001953125f;  // m / 512, exact
    return sign ? -v : v;
  }
  return __uint_as_float(sign | ((exp + 120u) << 23) | (mant << 20));
}

// 8 consecutive elements (p 16-byte aligned for f16, 32 for f32).
__device__ __forceinline__ void load8(const float* p, float (&v)[8]) {
  const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
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

// f16 / bf16: each pair of elements converted at once (__half2 / __nv_bfloat162).
template <class T>
struct HalfPair;
template <>
struct HalfPair<__half> {
  using type = __half2;
  __device__ __forceinline__ static float2 to_float2(__half2 h) { return __half22float2(h); }
};
template <>
struct HalfPair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  __device__ __forceinline__ static float2 to_float2(__nv_bfloat162 h) { return __bfloat1622float2(h); }
};
// 8 f16 / bf16 elements from their 16 bytes as loaded (load8, and flash decode's keys loaded early).
template <class T, class P = HalfPair<T>, class = typename P::type>
__device__ __forceinline__ void unpack8(uint4 raw, float (&v)[8]) {
  const typename P::type* h = reinterpret_cast<const typename P::type*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = P::to_float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
}
template <class T, class P = HalfPair<T>, class = typename P::type>
__device__ __forceinline__ void load8(const T* p, float (&v)[8]) {
  // One 16-byte load into a register copy first: unpacking through a reference to global memory
  // compiled to eight 4-byte loads (the one-head and generic instances ran 5-10 % slower, next82).
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  unpack8<T>(raw, v);
}
template <int n, class T, class P = HalfPair<T>, class = typename P::type>
__device__ __forceinline__ void load_pairs(const T* p, float (&v)[n]) {
#pragma unroll
  for (int e = 0; e < n; e += 2) {
    const float2 x = P::to_float2(*reinterpret_cast<const typename P::type*>(p + e));
    v[e] = x.x;
    v[e + 1] = x.y;
  }
}

// q4_0: 8 elements are 4 bytes, n elements n / 2 bytes (e a multiple of 8, or of n).
__device__ __forceinline__ void load8(const KvQ4& p, float (&v)[8]) {
  const uint32_t raw = *reinterpret_cast<const uint32_t*>(p.q + p.e / 2);
  const float s = __half2float(p.d[p.e >> 5]);
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = s * (static_cast<int>((raw >> (4 * i)) & 15) - 8);
}
template <int n>
__device__ __forceinline__ void load_pairs(const KvQ4& p, float (&v)[n]) {
  const float s = __half2float(p.d[p.e >> 5]);
#pragma unroll
  for (int e = 0; e < n; e += 2) {
    const uint8_t b = p.q[(p.e + e) / 2];
    v[e] = s * (static_cast<int>(b & 15) - 8);
    v[e + 1] = s * (static_cast<int>(b >> 4) - 8);
  }
}

// fp8: 8 elements are 8 bytes.
__device__ __forceinline__ void load8(const KvFp8& p, float (&v)[8]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p.p + p.e);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = fp8_e4m3_value(b[i]);
}
template <int n>
__device__ __forceinline__ void load_pairs(const KvFp8& p, float (&v)[n]) {
#pragma unroll
  for (int e = 0; e < n; ++e) v[e] = fp8_e4m3_value(p.p[p.e + e]);
}

// 8 q8_0 elements from their 8 quant bytes as loaded and their block's scale (load8, and flash
// decode's keys loaded early).
__device__ __forceinline__ void unpack8_q8(int2 raw, __half d, float (&v)[8]) {
  const int8_t* b = reinterpret_cast<const int8_t*>(&raw);
  const float s = __half2float(d);
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = s * b[i];
}
__device__ __forceinline__ void load8(const KvQ8& p, float (&v)[8]) {
  unpack8_q8(*reinterpret_cast<const int2*>(p.q + p.e), p.d[p.e >> 5], v);
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

// A thread's n elements of a key (n a multiple of 32, at a multiple of 32) held raw in registers
// between their load and their use, which flash decode's keys ahead separate by the PDL wait: the
// 2n bytes of an f16 / bf16 key (flash decode's scalar path takes it for bf16 caches; f16 and q8_0
// ones have decode_mma.cuh's KeyFrag). unpack(c) gives elements 8c .. 8c + 7 with load8's arithmetic.
template <class Kv, int n>
struct KeyRegs;
template <class T, int n>
struct KeyRegs<const T*, n> {
  uint4 raw[n / 8];
  __device__ __forceinline__ void load(const T* p) {
#pragma unroll
    for (int c = 0; c < n / 8; ++c) raw[c] = reinterpret_cast<const uint4*>(p)[c];
  }
  __device__ __forceinline__ void unpack(int c, float (&v)[8]) const { unpack8<T>(raw[c], v); }
};
// A cache of a type known at run time (K and V of different types): the typed loaders behind one
// switch per load, uniform across the CTA. elems = n_ctx kvw (where the scale planes start).
struct KvAny {
  const uint8_t* base;
  int64_t elems;
  KvDtype t;
  int64_t e;
  __device__ __forceinline__ KvAny operator+(int64_t o) const { return {base, elems, t, e + o}; }
};
template <class F>
__device__ __forceinline__ void with_typed(const KvAny& p, F&& f) {
  switch (p.t) {
    case KvDtype::kF16: f(reinterpret_cast<const __half*>(p.base) + p.e); break;
    case KvDtype::kBF16: f(reinterpret_cast<const __nv_bfloat16*>(p.base) + p.e); break;
    case KvDtype::kQ8_0:
      f(KvQ8{reinterpret_cast<const int8_t*>(p.base), reinterpret_cast<const __half*>(p.base + p.elems), p.e});
      break;
    case KvDtype::kQ4_0: f(KvQ4{p.base, reinterpret_cast<const __half*>(p.base + p.elems / 2), p.e}); break;
    case KvDtype::kFp8E4M3: f(KvFp8{p.base, p.e}); break;
    default: f(reinterpret_cast<const float*>(p.base) + p.e);
  }
}
__device__ __forceinline__ void load8(const KvAny& p, float (&v)[8]) {
  with_typed(p, [&](auto typed) { load8(typed, v); });
}
template <int n>
__device__ __forceinline__ void load_pairs(const KvAny& p, float (&v)[n]) {
  with_typed(p, [&](auto typed) { load_pairs<n>(typed, v); });
}

// L2 prefetch of n elements of the cache at p by the calling thread alone (check.cuh prefetch_l2;
// for q8_0 / q4_0 the quants and their blocks' f16 scales: a load8 / load_pairs reads both, so a
// scale left in DRAM would keep the load's DRAM round trip). A hint: it reads nothing back.
template <typename T>
__device__ __forceinline__ void prefetch_kv(const T* p, int n) {
  prefetch_l2(p, int64_t{n} * static_cast<int64_t>(sizeof(T)), 0, 1);
}
__device__ __forceinline__ void prefetch_kv(const KvQ8& p, int n) {
  prefetch_l2(p.q + p.e, n, 0, 1);
  prefetch_l2(p.d + p.e / 32, int64_t{(n + 31) / 32} * 2, 0, 1);
}
__device__ __forceinline__ void prefetch_kv(const KvQ4& p, int n) {
  prefetch_l2(p.q + p.e / 2, n / 2, 0, 1);
  prefetch_l2(p.d + p.e / 32, int64_t{(n + 31) / 32} * 2, 0, 1);
}
__device__ __forceinline__ void prefetch_kv(const KvFp8& p, int n) { prefetch_l2(p.p + p.e, n, 0, 1); }
__device__ __forceinline__ void prefetch_kv(const KvAny& p, int n) {
  with_typed(p, [&](auto typed) { prefetch_kv(typed, n); });
}

}  // namespace bw24::cuda
