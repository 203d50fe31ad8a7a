#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "cuda/attention/kv_load.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/ops/ops.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ __forceinline__ int64_t position(DevicePos p, int t) { return p.base + t + (p.dev ? *p.dev : 0); }

// Cache element i as float (ops.cuh KvDtype; `elems` = n_ctx kvw: where the scale planes start).
__device__ __forceinline__ float load_kv(const void* c, int64_t i, KvDtype t, int64_t elems) {
  const uint8_t* b = static_cast<const uint8_t*>(c);
  switch (t) {
    case KvDtype::kQ8_0:
      return __half2float(reinterpret_cast<const __half*>(b + elems)[i / 32]) * reinterpret_cast<const int8_t*>(b)[i];
    case KvDtype::kQ4_0:
      return __half2float(reinterpret_cast<const __half*>(b + elems / 2)[i / 32]) *
             (static_cast<int>((b[i / 2] >> (4 * (i % 2))) & 15) - 8);
    case KvDtype::kF16: return __half2float(static_cast<const __half*>(c)[i]);
    case KvDtype::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(c)[i]);
    case KvDtype::kFp8E4M3: return fp8_e4m3_value(b[i]);
    default: return static_cast<const float*>(c)[i];
  }
}

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

// Element `lane` of a block of 32 (one per lane of the warp) into a q8_0 or q4_0 cache at element
// i (cache layout: ops.cuh KvDtype), rounding as lib/quant: q8_0 d = amax / 127, q = round(x / d);
// q4_0 d = (the element of largest magnitude, the first of equals) / -8, q = min(15, (int)(x / d +
// 8.5)) with the product and sum rounded separately as the host's (no FMA).
__device__ __forceinline__ void store_kv_block(void* c, int64_t i, float x, KvDtype t, int64_t elems, int lane) {
  uint8_t* b = static_cast<uint8_t*>(c);
  if (t == KvDtype::kQ8_0) {
    const float d = warp_max(fabsf(x)) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    reinterpret_cast<int8_t*>(b)[i] = static_cast<int8_t>(roundf(x * id));
    if (lane == 0) reinterpret_cast<__half*>(b + elems)[i / 32] = __float2half_rn(d);
    return;
  }
  float best = x, amax = fabsf(x);
  int at = lane;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, o), oa = __shfl_xor_sync(0xffffffffu, amax, o);
    const int oi = __shfl_xor_sync(0xffffffffu, at, o);
    if (oa > amax || (oa == amax && oi < at)) best = ob, amax = oa, at = oi;
  }
  const float d = best / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  const int q = min(15, static_cast<int>(__fadd_rn(__fmul_rn(x, id), 8.5f)));
  const int hi = __shfl_down_sync(0xffffffffu, q, 1);
  if (lane % 2 == 0) b[i / 2] = static_cast<uint8_t>(q | (hi << 4));
  if (lane == 0) reinterpret_cast<__half*>(b + elems / 2)[i / 32] = __float2half_rn(d);
}

// One warp per (head, token), kRopeWarps a CTA; heads [0, n_head) are queries (rotated in place),
// the next n_head_kv are keys (rotated into the cache) whose warp also copies the value head into
// the cache. Why a warp: a 512-token prefill is ~20k (head, token) items of 64-512 elements. A CTA
// each (the first version: a CTA-wide sum, three barriers) took ~20-37 us a launch on the H200
// (ncu, 718253f) for ~22 MB of traffic (Qwen3-8B; ~7 us at 3 TB/s): ~10 waves of short CTAs, each a
// chain of loads, barriers and a double sincos. A warp sums with shuffles and waits on no barrier.
// kPer: elements a lane, head_dim <= 32 kPer (one instance per power of two up to kMaxHeadDim).
constexpr int kRopeWarps = 4;
template <int kPer>
__global__ void __launch_bounds__(32 * kRopeWarps) qk_rope_store_kernel(QkRopeArgs a) {
  constexpr int kRot = (kPer + 1) / 2;  // rotation pairs a lane at most (rope_dims / 2 <= 16 kPer)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = blockIdx.y, head = static_cast<int>(blockIdx.x) * kRopeWarps + warp, D = a.head_dim;
  if (head >= a.n_head + a.n_head_kv) return;  // whole warps; no CTA barrier follows
  const bool is_q = head < a.n_head;
  const int half = a.rope_dims / 2;
  // The norm weight and the rotation frequencies of this lane's elements before the PDL wait (no
  // kernel writes them): their loads overlap the previous kernel instead of adding two L2 round
  // trips to the chain after it.
  const float* nw = is_q ? a.q_norm : a.k_norm;
  const bool one_plus = is_q ? a.q_one_plus : a.k_one_plus;
  float wn[kPer];
  double fr[kRot];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    wn[k] = nw && i < D ? (one_plus ? 1.0f + nw[i] : nw[i]) : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < kRot; ++k) {
    const int i = lane + 32 * k;
    fr[k] = a.inv_freq && i < half ? a.inv_freq[i] : 0.0;
  }
  pdl_begin();
  const int kvw = a.n_head_kv * D, g = head - a.n_head;
  const int64_t p = position(a.pos, t);
  const float* src = is_q ? a.q + (static_cast<size_t>(t) * a.n_head + head) * D : a.k + static_cast<size_t>(t) * kvw + g * D;
  // Queries go back in place (f32), keys to the cache (per element; q8_0 / q4_0 through ko,
  // quantized by blocks once the row is complete).
  float* qdst = a.q + (static_cast<size_t>(t) * a.n_head + head) * D;
  const int64_t kbase = p * kvw + g * D;
  const bool bk = kv_blocked(a.kv_type.k), bv = kv_blocked(a.kv_type.v);
  __shared__ float xs_all[kRopeWarps][32 * kPer], ko_all[kRopeWarps][32 * kPer];
  float* xs = xs_all[warp];
  float* ko = ko_all[warp];
  auto put = [&](int i, float v) {
    if (is_q)
      qdst[i] = v;
    else if (bk)
      ko[i] = v;
    else
      store_kv(a.k_cache, kbase + i, v, a.kv_type.k);
  };
  float x[kPer], ss = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    x[k] = i < D ? src[i] : 0.0f;
    ss += x[k] * x[k];
  }
  const float inv = nw ? rsqrtf(warp_sum(ss) / D + a.eps) : 1.0f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = lane + 32 * k;
    if (i < D) xs[i] = nw ? x[k] * inv * wn[k] : x[k];
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kRot; ++k) {
    const int i = lane + 32 * k;
    if (i >= half) break;
    // Angles in double, as lib/ref computes them (fp32 loses digits at long positions).
    const double freq = a.inv_freq ? fr[k] : pow(static_cast<double>(a.theta), -2.0 * i / a.rope_dims);
    const double angle = static_cast<double>(p) * freq;
    double sd, cd;
    sincos(angle, &sd, &cd);
    const float c = static_cast<float>(cd), s = static_cast<float>(sd);
    const int i0 = a.neox ? i : 2 * i, i1 = a.neox ? i + half : 2 * i + 1;
    const float x0 = xs[i0], x1 = xs[i1];
    put(i0, x0 * c - x1 * s);
    put(i1, x1 * c + x0 * s);
  }
  for (int i = a.rope_dims + lane; i < D; i += 32) put(i, xs[i]);
  if (is_q) return;
  const float* vsrc = a.v + static_cast<size_t>(t) * kvw + g * D;
  if (!bv)
    for (int i = lane; i < D; i += 32) store_kv(a.v_cache, kbase + i, vsrc[i], a.kv_type.v);
  if (!bk && !bv) return;
  __syncwarp();  // ko complete
  // q8_0 / q4_0: the warp a block of 32 at a time (lane = element), K's blocks then V's (each where blocked).
  for (int b = 0; b < 2 * (D / 32); ++b) {
    const bool is_v = b >= D / 32;
    if (!(is_v ? bv : bk)) continue;
    const int i = (is_v ? b - D / 32 : b) * 32 + lane;
    store_kv_block(is_v ? a.v_cache : a.k_cache, kbase + i, is_v ? vsrc[i] : ko[i], is_v ? a.kv_type.v : a.kv_type.k,
                   a.n_ctx * kvw, lane);
  }
}

// y = act(gate) * up, f32 or bf16 (the down GEMM's input).
template <typename T>
__global__ void gated_act_kernel(T* y, const float* gate, const float* up, int64_t n, int act) {
  pdl_begin();
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  store_as(y + i, gate_activation(gate[i], act) * up[i]);
}

// The same, four elements a thread (16-byte loads; y, gate and up 16-byte aligned, n4 = n / 4).
// Why: a 512-token Qwen3-8B prefill reads 50 MB of f32 and writes 12.6 MB of bf16 here; one
// element a thread took 32 us on the H200 (~1.9 TB/s; ncu, 718253f), four issue a quarter of the
// loads for the same bytes. With the warp-per-head RoPE kernel: Qwen3-8B BF16 pp512 29.6k -> 31.9k.
__device__ __forceinline__ void store4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void store4(__nv_bfloat16* p, const float (&v)[4]) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v[0], v[1]), hi = __floats2bfloat162_rn(v[2], v[3]);
  uint2 w;
  w.x = *reinterpret_cast<const uint32_t*>(&lo);
  w.y = *reinterpret_cast<const uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(p) = w;
}
template <typename T>
__global__ void gated_act4_kernel(T* y, const float* gate, const float* up, int64_t n4, int act) {
  pdl_begin();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n4) return;
  const float4 g = reinterpret_cast<const float4*>(gate)[i], u = reinterpret_cast<const float4*>(up)[i];
  const float v[4] = {gate_activation(g.x, act) * u.x, gate_activation(g.y, act) * u.y,
                      gate_activation(g.z, act) * u.z, gate_activation(g.w, act) * u.w};
  store4(y + 4 * i, v);
}

template <typename T>
cudaError_t launch_gated_act(T* y, const float* gate, const float* up, int64_t n, int act, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (n % 4 == 0 && aligned(y) && aligned(gate) && aligned(up))
    return launch_pdl(gated_act4_kernel<T>, dim3(blocks_for(n / 4)), dim3(kThreads), 0, stream, y, gate, up, n / 4, act);
  return launch_pdl(gated_act_kernel<T>, dim3(blocks_for(n)), dim3(kThreads), 0, stream, y, gate, up, n, act);
}

__global__ void split_q_gate_kernel(float* q, float* gate, const float* qg, int64_t n, int D) {
  pdl_begin();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;  // element of q
  if (i >= n) return;
  const int64_t head = i / D, d = i % D;
  q[i] = qg[head * 2 * D + d];
  gate[i] = qg[head * 2 * D + D + d];
}

__global__ void sigmoid_mul_kernel(float* x, const float* gate, int64_t n) {
  pdl_begin();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] *= 1.0f / (1.0f + expf(-gate[i]));
}

__global__ void add_kernel(float* x, const float* y, int64_t n) {
  pdl_begin();
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void attention_kernel(float* out, const float* q, const void* kc, const void* vc, KvTypes kv, float* scores,
                                 int n_head, int n_head_kv, int D, DevicePos pos, int window, float scale, int n_ctx) {
  pdl_begin();
  const int h = blockIdx.x, t = blockIdx.y, g = h / (n_head / n_head_kv);
  const int64_t p = position(pos, t), first = window > 0 ? max(static_cast<int64_t>(0), p - window + 1) : 0;
  const int kvw = n_head_kv * D;
  const int64_t plane = int64_t{n_ctx} * kvw;  // elements: where the scale planes start
  const float* qh = q + (static_cast<size_t>(t) * n_head + h) * D;
  float* s = scores + (static_cast<size_t>(t) * n_head + h) * n_ctx;
  __shared__ float red[kThreads / 32];
  __shared__ float bcast;
  // Scores and their max: a warp per key, lanes across the head (coalesced 128-byte rows; a
  // thread per key read 32 rows per load instruction).
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float mx = -INFINITY;
  for (int64_t j = first + warp; j <= p; j += kThreads / 32) {
    const int64_t kj = j * kvw + g * D;
    float acc = 0;
    for (int d = lane; d < D; d += 32) acc += qh[d] * load_kv(kc, kj + d, kv.k, plane);
    acc = warp_sum(acc) * scale;
    if (lane == 0) s[j] = acc;
    mx = fmaxf(mx, acc);
  }
  mx = warp_max(mx);
  __syncthreads();  // s[] written by lane 0 of each warp, read by every thread below
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = mx;
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = red[0];
    for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, red[w]);
    bcast = m;
  }
  __syncthreads();
  mx = bcast;
  float sum = 0;
  for (int64_t j = first + threadIdx.x; j <= p; j += kThreads) {
    float e = expf(s[j] - mx);
    s[j] = e;
    sum += e;
  }
  sum = warp_sum(sum);
  __syncthreads();
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += red[w];
    bcast = 1.0f / total;
  }
  __syncthreads();
  const float inv = bcast;
  float* oh = out + (static_cast<size_t>(t) * n_head + h) * D;
  for (int d = threadIdx.x; d < D; d += kThreads) {
    float acc = 0;
    for (int64_t j = first; j <= p; ++j) acc += s[j] * load_kv(vc, j * kvw + g * D + d, kv.v, plane);
    oh[d] = acc * inv;
  }
}

}  // namespace

cudaError_t qk_rope_store(const QkRopeArgs& a, int n_tokens, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (a.head_dim > kMaxHeadDim || a.rope_dims > a.head_dim ||
      (a.kv_type.blocked() && (a.head_dim % 32 != 0 || a.n_ctx <= 0)))
    return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((a.n_head + a.n_head_kv + kRopeWarps - 1) / kRopeWarps), n_tokens);
  auto go = [&](void (*kernel)(QkRopeArgs)) { return launch_pdl(kernel, grid, dim3(32 * kRopeWarps), 0, stream, a); };
  static_assert(kMaxHeadDim == 512, "instances up to 16 elements a lane");
  if (a.head_dim <= 64) return go(qk_rope_store_kernel<2>);
  if (a.head_dim <= 128) return go(qk_rope_store_kernel<4>);
  if (a.head_dim <= 256) return go(qk_rope_store_kernel<8>);
  return go(qk_rope_store_kernel<16>);
}

cudaError_t gated_act(float* y, const float* gate, const float* up, int64_t n, int act, cudaStream_t stream) {
  return launch_gated_act(y, gate, up, n, act, stream);
}

cudaError_t gated_act_bf16(__nv_bfloat16* y, const float* gate, const float* up, int64_t n, int act,
                           cudaStream_t stream) {
  return launch_gated_act(y, gate, up, n, act, stream);
}

cudaError_t split_q_gate(float* q, float* gate, const float* qg, int n_tokens, int n_head, int head_dim,
                         cudaStream_t stream) {
  const int64_t n = int64_t{n_tokens} * n_head * head_dim;
  if (n <= 0) return cudaSuccess;
  return launch_pdl(split_q_gate_kernel, dim3(blocks_for(n)), dim3(kThreads), 0, stream, q, gate, qg, n, head_dim);
}

cudaError_t sigmoid_mul(float* x, const float* gate, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return launch_pdl(sigmoid_mul_kernel, dim3(blocks_for(n)), dim3(kThreads), 0, stream, x, gate, n);
}

cudaError_t add_inplace(float* x, const float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return launch_pdl(add_kernel, dim3(blocks_for(n)), dim3(kThreads), 0, stream, x, y, n);
}

cudaError_t attention(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv, float* scores,
                      int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos, int window, float scale,
                      int n_ctx, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (kv.blocked() && head_dim % 32 != 0) return cudaErrorInvalidValue;
  return launch_pdl(attention_kernel, dim3(n_head, n_tokens), dim3(kThreads), 0, stream, out, q, k_cache, v_cache,
                    kv, scores, n_head, n_head_kv, head_dim, pos, window, scale, n_ctx);
}

}  // namespace bw24::cuda
