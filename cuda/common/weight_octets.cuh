// Eight consecutive weights of a row as floats, one traits record per format, as the device holds
// the weights (cuda/gemv/gemv_q8.cu, lib/quant/repack.h): planes for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q6_K, IQ4_XS (plane p of a tensor of N blocks starts at N * bytes before it; Q6_K's planes cut by
// tiles, cuda/common/q6k_tiles.cuh), file layout for Q4_K and Q5_K. gb = row * blocks_per_row +
// block indexes a block. Readers: the bf16 expansion of the prefill GEMM (cuda/gemm/dequant.cu) and
// the embedding gather (cuda/ops/embed.cu, compiled without FMA contraction so that its floats are
// lib/quant's dequant bits).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/common/check.cuh"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/q6k_tiles.cuh"
#include "cuda/gemm/expand.cuh"

namespace bw24::cuda::octets {

// Each format: kBlockElems, and get8(w, n_blocks, row_blocks, gb, e, v): weights [e, e + 8) of
// block gb as floats (e a multiple of 8). A thread makes 8 outputs, one 16-byte store: a warp
// writes 512 contiguous bytes per store instruction (a thread per 32 weights with four stores at a
// 64-byte stride measured 1.5 TB/s of writes, ncu).
__device__ __forceinline__ uint2 load8(const uint8_t* p) { return __ldg(reinterpret_cast<const uint2*>(p)); }
__device__ __forceinline__ void bytes8(uint2 v, uint8_t* b) { *reinterpret_cast<uint2*>(b) = v; }

struct Q4_0 {  // qs[16] | d. Byte j: element j (low nibble), j + 16 (high). w = (q - 8) d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const float d = half_at(w + n * 16 + gb * 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * (((q[j] >> shift) & 15) - 8);
  }
};

struct Q4_1 {  // qs[16] | (d, m). w = q d + m
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const float d = half_at(w + n * 16 + gb * 4), m = half_at(w + n * 16 + gb * 4 + 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * ((q[j] >> shift) & 15) + m;
  }
};

struct Q5_0 {  // qs[16] | qh (u32, bit j = fifth bit of element j) | d. w = (q - 16) d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const uint32_t qh = __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb) >> e;
    const float d = half_at(w + n * 20 + gb * 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * (static_cast<int>(((q[j] >> shift) & 15) | (((qh >> j) & 1) << 4)) - 16);
  }
};

struct Q5_1 {  // qs[16] | qh (u32) | (d, m). w = q d + m, q in [0, 31]
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const uint32_t qh = __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb) >> e;
    const float d = half_at(w + n * 20 + gb * 4), m = half_at(w + n * 20 + gb * 4 + 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * static_cast<int>(((q[j] >> shift) & 15) | (((qh >> j) & 1) << 4)) + m;
  }
};

struct Q8_0 {  // qs[32] | d. w = q d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    int8_t q[8];
    bytes8(load8(w + gb * 32 + e), reinterpret_cast<uint8_t*>(q));
    const float d = half_at(w + n * 32 + gb * 2);
    for (int j = 0; j < 8; ++j) v[j] = d * q[j];
  }
};

// Q4_K file layout [d, dmin | scales[12] | qs[128]]: sub-block s = 2c + h (elements [32 s, 32 s +
// 32)) holds qs[32c + l]'s low (h = 0) or high (h = 1) nibbles; w = d sc_s q - dmin m_s. Q5_K
// (kFifth) [d, dmin | scales[12] | qh[32] | qs[128]]: the same, and the fifth bit of element 32 s + l
// is bit s of qh[l].
template <bool kFifth>
struct KQuant {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int e, float* v) {
    const uint8_t* blk = w + gb * (kFifth ? 176 : 144);
    const int s = e / 32, l0 = e % 32;
    const uint4 head = __ldg(reinterpret_cast<const uint4*>(blk));
    uint8_t q[8], qh[8];
    bytes8(load8(blk + (kFifth ? 48 : 16) + 32 * (s / 2) + l0), q);
    if constexpr (kFifth) bytes8(load8(blk + 16 + l0), qh);
    q4k_expand8(head, q, s, v, kFifth ? qh : nullptr);
  }
};
using Q4_K = KQuant<false>;
using Q5_K = KQuant<true>;

// Q6_K planes ql[128] | qh[64] | scales[16] (int8) | d. Sub-block s = 4 half + j (elements
// 128 half + 32 j + l): low 4 bits from ql[64 half + 32 (j & 1) + l] (nibble j / 2), top two from
// qh[32 half + l] bits 2j; scale index 8 half + 2j + l / 16; w = d sc (q - 32).
struct Q6_K {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t row_blocks, int64_t gb, int e, float* v) {
    const int s = e / 32, l0 = e % 32, half = s / 4, j = s % 4;
    const Q6KTiles t(n, row_blocks);  // planes cut by tiles (cuda/common/q6k_tiles.cuh)
    uint8_t ql[8], qh[8];
    bytes8(load8(w + t.ql(gb) + 64 * half + 32 * (j & 1) + l0), ql);
    bytes8(load8(w + t.qh(gb) + 32 * half + l0), qh);
    const int8_t sc = reinterpret_cast<const int8_t*>(w + t.sc(gb))[8 * half + 2 * j + l0 / 16];
    q6k_expand8(ql, qh, j, half_at(w + t.d(gb)) * sc, v);
  }
};

// IQ4_XS planes qs[128] | (d, scales_h, scales_l[4]): sub-block ib = e / 32, qs[16 ib + j] holds
// elements j (low nibble) and j + 16 (high) as level indices; w = d (ls - 32) level.
struct IQ4_XS {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    const int ib = e / 32, l0 = e % 32;
    const uint2 q = load8(w + gb * 128 + 16 * ib + (l0 & 15));
    const uint8_t* hb = w + n * 128 + gb * 8;
    const int scales_h = hb[2] | (hb[3] << 8);
    const int ls = ((hb[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
    const float dl = half_at(hb) * static_cast<float>(ls - 32);
    const int shift = l0 < 16 ? 0 : 4;
    const int lv[2] = {iq4_levels((q.x >> shift) & 0x0F0F0F0Fu), iq4_levels((q.y >> shift) & 0x0F0F0F0Fu)};
    const int8_t* b = reinterpret_cast<const int8_t*>(lv);
    for (int j = 0; j < 8; ++j) v[j] = dl * b[j];
  }
};

// F16 and BF16: 8 values, one 16-byte load.
template <typename H>
struct Float16 {
  static constexpr int kBlockElems = 8;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int, float* v) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(w) + gb);
    const H* h = reinterpret_cast<const H*>(&raw);
    for (int j = 0; j < 8; ++j) v[j] = static_cast<float>(h[j]);
  }
};
using F16 = Float16<__half>;
using BF16 = Float16<__nv_bfloat16>;

// F32 (MoE routers, which llama-quantize leaves in F32): 8 values, two 16-byte loads.
struct F32 {
  static constexpr int kBlockElems = 8;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int, float* v) {
    const float4 lo = __ldg(reinterpret_cast<const float4*>(w) + 2 * gb), hi = __ldg(reinterpret_cast<const float4*>(w) + 2 * gb + 1);
    v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
  }
};

// The formats' dispatch table, shared by the kernel families that read weights through get8: fn(F{})
// with F the traits record of `type`, cudaErrorInvalidValue for a type without one.
template <class Fn>
cudaError_t with_format(uint32_t type, Fn&& fn) {
  switch (type) {
    case kF32: return fn(F32{});
    case kF16: return fn(F16{});
    case kBF16: return fn(BF16{});
    case kQ4_0: return fn(Q4_0{});
    case kQ4_1: return fn(Q4_1{});
    case kQ5_0: return fn(Q5_0{});
    case kQ5_1: return fn(Q5_1{});
    case kQ8_0: return fn(Q8_0{});
    case kQ4_K: return fn(Q4_K{});
    case kQ5_K: return fn(Q5_K{});
    case kQ6_K: return fn(Q6_K{});
    case kIQ4_XS: return fn(IQ4_XS{});
    default: return cudaErrorInvalidValue;
  }
}
// Whether with_format has a record for type.
inline bool supported(uint32_t type) {
  return with_format(type, [](auto) { return cudaSuccess; }) == cudaSuccess;
}

}  // namespace bw24::cuda::octets
