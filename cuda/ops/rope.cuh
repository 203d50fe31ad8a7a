// What the RoPE / KV-store kernel (ops.cu qk_rope_store) and flash decode's fused form share: a warp
// normalizes and rotates one head row (norm_rope_row), a warp writes a token's key and value head
// into the cache (put_key, store_kv_tail), each element rounded to the cache type as lib/quant and lib/core
// round (store_kv, kv_block_scales + store_kv_quant, store_kv_q8_rows). One code path, so the fused form writes
// the same bytes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "cuda/common/check.cuh"
#include "cuda/ops/ops.cuh"

namespace bw24::cuda {

__device__ __forceinline__ int64_t rope_position(DevicePos p, int t) { return p.base + t + (p.dev ? *p.dev : 0); }

// f to e4m3 exactly as lib/core's f32_to_fp8_e4m3: NaN 0x7f, saturating at 448, ties to even.
__device__ __forceinline__ uint8_t fp8_e4m3_code(float f) {
  if (isnan(f)) return 0x7f;
  const uint8_t sign = signbit(f) ? 0x80 : 0;
  const float a = fabsf(f);
  if (a >= 448.0f) return sign | 0x7e;
  if (a < 0.015625f) return static_cast<uint8_t>(sign | static_cast<int>(rintf(ldexpf(a, 9))));  // subnormal steps
  int e = 0;
  const float m = frexpf(a, &e);
  int q = static_cast<int>(rintf((2.0f * m - 1.0f) * 8.0f)), exp = e - 1 + 7;
  if (q == 8) q = 0, ++exp;
  if (exp > 15 || (exp == 15 && q == 7)) return sign | 0x7e;
  return static_cast<uint8_t>(sign | (exp << 3) | q);
}

// A float stored as an element of a per-element cache type (f32, f16, bf16, fp8).
__device__ __forceinline__ void store_kv(void* c, int64_t i, float v, KvDtype t) {
  switch (t) {
    case KvDtype::kF16: static_cast<__half*>(c)[i] = __float2half_rn(v); break;
    case KvDtype::kBF16: static_cast<__nv_bfloat16*>(c)[i] = __float2bfloat16_rn(v); break;
    case KvDtype::kFp8E4M3: static_cast<uint8_t*>(c)[i] = fp8_e4m3_code(v); break;
    default: static_cast<float*>(c)[i] = v;
  }
}

// Blocks of 32 of a q8_0 or q4_0 cache (one element a lane of the warp), rounding as lib/quant:
// q8_0 d = amax / 127, q = round(x / d); q4_0 d = (the element of largest magnitude, the first of
// equals) / -8, q = min(15, (int)(x / d + 8.5)) with the product and sum rounded separately as the
// host's (no FMA). kv_block_scales finds the scales of N blocks at once, their butterflies side by
// side, so that a warp's blocks wait one chain of five shuffles and not N (a max and the first of
// equals do not depend on the order: each block's scale is the one-block reduction's).
template <int N>
__device__ __forceinline__ void kv_block_scales(const float (&x)[N], KvDtype t, float (&d)[N], int lane) {
  if (t == KvDtype::kQ8_0) {
    float amax[N];
#pragma unroll
    for (int b = 0; b < N; ++b) amax[b] = fabsf(x[b]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int b = 0; b < N; ++b) amax[b] = fmaxf(amax[b], __shfl_xor_sync(0xffffffffu, amax[b], o));
#pragma unroll
    for (int b = 0; b < N; ++b) d[b] = amax[b] / 127.0f;
    return;
  }
  float best[N], amax[N];
  int at[N];
#pragma unroll
  for (int b = 0; b < N; ++b) best[b] = x[b], amax[b] = fabsf(x[b]), at[b] = lane;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int b = 0; b < N; ++b) {
      const float ob = __shfl_xor_sync(0xffffffffu, best[b], o), oa = __shfl_xor_sync(0xffffffffu, amax[b], o);
      const int oi = __shfl_xor_sync(0xffffffffu, at[b], o);
      if (oa > amax[b] || (oa == amax[b] && oi < at[b])) best[b] = ob, amax[b] = oa, at[b] = oi;
    }
#pragma unroll
  for (int b = 0; b < N; ++b) d[b] = best[b] / -8.0f;
}
// Element `lane` of a block (x, its scale d from kv_block_scales) into the cache at element i.
__device__ __forceinline__ void store_kv_quant(void* c, int64_t i, float x, float d, KvDtype t, int64_t elems, int lane) {
  uint8_t* b = static_cast<uint8_t*>(c);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  if (t == KvDtype::kQ8_0) {
    reinterpret_cast<int8_t*>(b)[i] = static_cast<int8_t>(roundf(x * id));
    if (lane == 0) reinterpret_cast<__half*>(b + elems)[i / 32] = __float2half_rn(d);
    return;
  }
  const int q = min(15, static_cast<int>(__fadd_rn(__fmul_rn(x, id), 8.5f)));
  const int hi = __shfl_down_sync(0xffffffffu, q, 1);
  if (lane % 2 == 0) b[i / 2] = static_cast<uint8_t>(q | (hi << 4));
  if (lane == 0) reinterpret_cast<__half*>(b + elems / 2)[i / 32] = __float2half_rn(d);
}

// This lane's norm weights of a head row (kPer elements a lane, head_dim <= 32 kPer): read before
// the PDL wait (no kernel writes them).
template <int kPer>
struct RopeLane {
  static constexpr int kRot = (kPer + 1) / 2;  // rotation pairs a lane at most (rope_dims / 2 <= 16 kPer)
  float wn[kPer];
};
template <int kPer>
__device__ __forceinline__ RopeLane<kPer> rope_lane(const QkRopeArgs& a, bool is_q, int lane) {
  RopeLane<kPer> c;
  const float* nw = is_q ? a.q_norm : a.k_norm;
  const bool one_plus = is_q ? a.q_one_plus : a.k_one_plus;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    c.wn[k] = nw && i < a.head_dim ? (one_plus ? 1.0f + nw[i] : nw[i]) : 0.0f;
  }
  return c;
}

// The cosines and sines of this lane's rotation pairs at position p (frequencies from inv_freq, or
// theta where there is none): the angles in double, as
// lib/ref computes them (fp32 loses digits at long positions), so a double sincos a pair (~100s of
// FP64 instructions and a stack slot for the slow range reduction): computed before the PDL wait
// where the position is known there, off the chain after it. Queries and keys share them (the same
// frequencies).
template <int kPer>
struct RopeAngles {
  float cs[RopeLane<kPer>::kRot], sn[RopeLane<kPer>::kRot];
};
// Rotation pair i's (cos, sin) at position p: rope_angles' arithmetic, and rope_table's, so a table
// holds the bits the lanes would compute.
__device__ __forceinline__ float2 rope_pair(const double* inv_freq, float theta, int rope_dims, int64_t p, int i) {
  const double freq = inv_freq ? inv_freq[i] : pow(static_cast<double>(theta), -2.0 * i / rope_dims);
  const double angle = static_cast<double>(p) * freq;
  double sd, cd;
  sincos(angle, &sd, &cd);
  return make_float2(static_cast<float>(cd), static_cast<float>(sd));
}
template <int kPer>
__device__ __forceinline__ RopeAngles<kPer> rope_angles(const QkRopeArgs& a, int64_t p, int lane) {
  RopeAngles<kPer> r;
  const int half = a.rope_dims / 2;
#pragma unroll
  for (int k = 0; k < RopeLane<kPer>::kRot; ++k) {
    const int i = lane + 32 * k;
    r.cs[k] = 1.0f, r.sn[k] = 0.0f;
    if (i >= half) continue;
    const float2 cs = rope_pair(a.inv_freq, a.theta, a.rope_dims, p, i);
    r.cs[k] = cs.x, r.sn[k] = cs.y;
  }
  return r;
}
// The same angles read from a rope_table row (a.angles: the token's (cos, sin) per pair).
template <int kPer>
__device__ __forceinline__ RopeAngles<kPer> table_angles(const QkRopeArgs& a, int lane) {
  RopeAngles<kPer> r;
  const int half = a.rope_dims / 2;
#pragma unroll
  for (int k = 0; k < RopeLane<kPer>::kRot; ++k) {
    const int i = lane + 32 * k;
    const float2 cs = i < half ? a.angles[i] : make_float2(1.0f, 0.0f);
    r.cs[k] = cs.x, r.sn[k] = cs.y;
  }
  return r;
}

// A warp's head row (head_dim floats), lane l holding elements l + 32 k: all kPer loads issued
// before any is used, so the row costs one round trip. The callers load the rows a warp needs (a
// key's and its value's) together, before the work on any of them.
template <int kPer>
struct LaneRow {
  float x[kPer];
};
template <int kPer>
__device__ __forceinline__ LaneRow<kPer> load_lane_row(const float* src, int D, int lane) {
  LaneRow<kPer> row;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    row.x[k] = i < D ? src[i] : 0.0f;
  }
  return row;
}

// A warp: a head row (load_lane_row) RMS-normalized (q_norm / k_norm, when set) and rotated by the
// angles of rope_angles, each output element i handed to put(i, v) once. xs: the warp's head_dim
// floats of shared scratch.
template <int kPer, class Put>
__device__ __forceinline__ void norm_rope_row(const QkRopeArgs& a, const RopeLane<kPer>& c, const RopeAngles<kPer>& r,
                                              bool is_q, const LaneRow<kPer>& row, float* xs, int lane, Put&& put) {
  const int D = a.head_dim, half = a.rope_dims / 2;
  const float* nw = is_q ? a.q_norm : a.k_norm;
  float x[kPer], ss = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    x[k] = row.x[k];
    ss += x[k] * x[k];
  }
  const float inv = nw ? rsqrtf(warp_sum(ss) / D + a.eps) : 1.0f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    if (i < D) xs[i] = nw ? x[k] * inv * c.wn[k] : x[k];
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < RopeLane<kPer>::kRot; ++k) {
    const int i = lane + 32 * k;
    if (i >= half) break;
    const float cs = r.cs[k], sn = r.sn[k];
    const int i0 = a.neox ? i : 2 * i, i1 = a.neox ? i + half : 2 * i + 1;
    const float x0 = xs[i0], x1 = xs[i1];
    put(i0, x0 * cs - x1 * sn);
    put(i1, x1 * cs + x0 * sn);
  }
  for (int i = a.rope_dims + lane; i < D; i += 32) put(i, xs[i]);
}

// Element i of a rotated key head of the cache row at kbase: per element into the cache, or (q8_0 /
// q4_0) into the warp's ko scratch for store_kv_tail's blocks.
__device__ __forceinline__ void put_key(const QkRopeArgs& a, int64_t kbase, float* ko, int i, float v) {
  if (kv_blocked(a.kv_type.k))
    ko[i] = v;
  else
    store_kv(a.k_cache, kbase + i, v, a.kv_type.k);
}

// q8_0 K and V head rows (ko: the rotated key, vo: D floats of the warp's scratch for the value),
// four consecutive elements a lane: float4 f = lane + 32 m of a row holds elements 4f .. 4f + 3, so
// lanes 8b .. 8b + 7 of group m hold block 4m + b, its largest |x| three butterfly steps over those
// lanes, and each lane finds one scale a group and row (store_act_q8x4's layout). The codes go out as
// one 4-byte store a lane, the scale from the block's first lane. Same rounding as store_kv_quant
// (d = amax / 127, q = round(x / d) as x times 1 / d, d stored as f16), so the same bytes. Before,
// the warp's eight blocks of a Qwen3-8B head (K and V, D = 128) were a block a lane-column: forty
// shuffles, eight IEEE divides and eight reciprocals a lane, ~560 instructions on the one warp that
// every other warp of a flash decode CTA waits for at its barrier, 1.3 us there (next307's stamps).
// H200, tg128 with a q8_0 cache, the previous code's bench against this one, alternated (next308):
// Qwen3-8B Q4_K_M 571.8 / 571.5 -> 584.6 / 584.2 tok/s, at depth 4096 511.3 / 512.7 -> 516.4 / 514.1;
// Qwen3-30B-A3B 629.8 -> 648.9; Qwen3.5-9B (D = 256) 565.4 -> 572.3.
template <int kPer>
__device__ __forceinline__ void store_kv_q8_rows(const QkRopeArgs& a, int64_t kbase, const float* ko, float* vo,
                                                 const LaneRow<kPer>& v, int lane) {
  const int D = a.head_dim;
  constexpr int kVec = (kPer + 3) / 4;  // a lane's float4s of a row (kVec groups of 128 elements cover D)
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (lane + 32 * k < D) vo[lane + 32 * k] = v.x[k];
  __syncwarp();  // ko and vo complete
  float4 x[2 * kVec];
  float amax[2 * kVec];
#pragma unroll
  for (int m = 0; m < kVec; ++m) {
    const int f = lane + 32 * m;
    const bool in = 4 * f < D;
    x[m] = in ? reinterpret_cast<const float4*>(ko)[f] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    x[kVec + m] = in ? reinterpret_cast<const float4*>(vo)[f] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int r = 0; r < 2 * kVec; ++r)
    amax[r] = fmaxf(fmaxf(fabsf(x[r].x), fabsf(x[r].y)), fmaxf(fabsf(x[r].z), fabsf(x[r].w)));
#pragma unroll
  for (int o = 1; o < 8; o *= 2)
#pragma unroll
    for (int r = 0; r < 2 * kVec; ++r) amax[r] = fmaxf(amax[r], __shfl_xor_sync(0xffffffffu, amax[r], o));
  const int64_t elems = int64_t{a.n_ctx} * a.n_head_kv * D;
#pragma unroll
  for (int r = 0; r < 2 * kVec; ++r) {
    const int f = lane + 32 * (r % kVec);
    if (4 * f >= D) continue;
    uint8_t* b = static_cast<uint8_t*>(r < kVec ? a.k_cache : a.v_cache);
    const float d = amax[r] / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    const int64_t i = kbase + 4 * f;
    *reinterpret_cast<char4*>(b + i) =
        make_char4(static_cast<signed char>(roundf(x[r].x * id)), static_cast<signed char>(roundf(x[r].y * id)),
                   static_cast<signed char>(roundf(x[r].z * id)), static_cast<signed char>(roundf(x[r].w * id)));
    if (lane % 8 == 0) reinterpret_cast<__half*>(b + elems)[i / 32] = __float2half_rn(d);
  }
}

// After a warp's put_key of every element of key head g (cache row at kbase): the token's value
// head v (load_lane_row, loaded before the key's work) into the cache (per element; q8_0 / q4_0 a
// block of 32 at a time, as the key's blocks from ko once the row is complete). The value row came
// in before: read here, each element's load would have followed the cache stores before it (the
// compiler cannot tell the two buffers apart), D / 32 dependent L2 round trips on the path of
// the warp every other warp of a flash decode CTA waits for. H200, tg128 (next156): Qwen3-8B Q4_K_M
// 519.0 / 522.6 -> 525.7 / 529.1 tok/s; Qwen3-30B-A3B and the hybrids within noise.
// vo: D floats of the warp's scratch, for a q8_0 value row (store_kv_q8_rows).
template <int kPer>
__device__ __forceinline__ void store_kv_tail(const QkRopeArgs& a, int64_t kbase, const float* ko, float* vo,
                                              const LaneRow<kPer>& v, int lane) {
  const int D = a.head_dim, kvw = a.n_head_kv * D;
  const bool bk = kv_blocked(a.kv_type.k), bv = kv_blocked(a.kv_type.v);
  if (a.kv_type.k == KvDtype::kQ8_0 && a.kv_type.v == KvDtype::kQ8_0) {
    store_kv_q8_rows(a, kbase, ko, vo, v, lane);
    return;
  }
  if (!bv)
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (lane + 32 * k < D) store_kv(a.v_cache, kbase + lane + 32 * k, v.x[k], a.kv_type.v);
  if (!bk && !bv) return;
  __syncwarp();  // ko complete
  // q4_0, or q8_0 beside another type: blocks of 32 (lane = element), K's then V's (each where
  // blocked): every element into registers first (ko is shared memory the compiler cannot tell from
  // the cache's global bytes, so a load after a store waits for it), then the blocks' scales side by
  // side, then the stores. H200, tg128 with a q8_0 cache (next299, single rows against the code
  // that took block after block): Qwen3-8B Q4_K_M at depth 4096 505.8 -> 509.9 tok/s,
  // Qwen3-30B-A3B 622.5 -> 629.9 (docs/performance.md round 54).
  constexpr int kBlocks = 2 * kPer;  // K's D / 32 <= kPer blocks in slots 0.., V's kPer in kPer..
  float x[kBlocks], d[kBlocks];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    x[k] = bk && k < D / 32 ? ko[32 * k + lane] : 0.0f;
    x[kPer + k] = v.x[k];
  }
  if (a.kv_type.k == a.kv_type.v) {
    kv_block_scales<kBlocks>(x, a.kv_type.k, d, lane);
  } else {  // one of them blocked (or both, of two block types): each half with its own type
    float xk[kPer], xv[kPer], dk[kPer] = {}, dv[kPer] = {};
#pragma unroll
    for (int k = 0; k < kPer; ++k) xk[k] = x[k], xv[k] = x[kPer + k];
    if (bk) kv_block_scales<kPer>(xk, a.kv_type.k, dk, lane);
    if (bv) kv_block_scales<kPer>(xv, a.kv_type.v, dv, lane);
#pragma unroll
    for (int k = 0; k < kPer; ++k) d[k] = dk[k], d[kPer + k] = dv[k];
  }
  const int64_t elems = int64_t{a.n_ctx} * kvw;
  if (bk)
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (k < D / 32) store_kv_quant(a.k_cache, kbase + 32 * k + lane, x[k], d[k], a.kv_type.k, elems, lane);
  if (bv)
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (k < D / 32) store_kv_quant(a.v_cache, kbase + 32 * k + lane, x[kPer + k], d[kPer + k], a.kv_type.v, elems, lane);
}

}  // namespace bw24::cuda
