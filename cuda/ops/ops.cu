#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "cuda/attention/kv_load.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/ops/ops.cuh"
#include "cuda/ops/rope.cuh"

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
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = blockIdx.y, head = static_cast<int>(blockIdx.x) * kRopeWarps + warp, D = a.head_dim;
  if (head >= a.n_head + a.n_head_kv) return;  // whole warps; no CTA barrier follows
  const bool is_q = head < a.n_head;
  // The norm weight, the rotation frequencies and the angles of this lane's elements before the PDL
  // wait (no kernel of the step writes them, nor the position: a copy, set_step or the previous
  // step's choice kernel writes it before the step's first kernel): their loads and the double
  // sincos overlap the previous kernel instead of adding to the chain after it.
  const RopeLane<kPer> c = rope_lane<kPer>(a, is_q, lane);
  const int64_t p = rope_position(a.pos, t);
  const RopeAngles<kPer> r = rope_angles<kPer>(a, p, lane);
  pdl_begin();
  const int kvw = a.n_head_kv * D, g = head - a.n_head;
  const float* src = is_q ? a.q + (static_cast<size_t>(t) * a.n_head + head) * D : a.k + static_cast<size_t>(t) * kvw + g * D;
  // Queries go back in place (f32), keys to the cache (put_key).
  float* qdst = a.q + (static_cast<size_t>(t) * a.n_head + head) * D;
  const int64_t kbase = p * kvw + g * D;
  // ko, vo: the key's and the value's rows for a blocked cache (store_kv_tail; float4 reads of q8_0 rows).
  __shared__ alignas(16) float xs_all[kRopeWarps][32 * kPer], ko_all[kRopeWarps][32 * kPer], vo_all[kRopeWarps][32 * kPer];
  float* ko = ko_all[warp];
  // A key's warp loads the value head with the key (store_kv_tail).
  const LaneRow<kPer> row = load_lane_row<kPer>(src, D, lane);
  const LaneRow<kPer> value =
      is_q ? LaneRow<kPer>{} : load_lane_row<kPer>(a.v + static_cast<size_t>(t) * kvw + g * D, D, lane);
  norm_rope_row<kPer>(a, c, r, is_q, row, xs_all[warp], lane, [&](int i, float v) {
    if (is_q)
      qdst[i] = v;
    else
      put_key(a, kbase, ko, i, v);
  });
  if (!is_q) store_kv_tail(a, kbase, ko, vo_all[warp], value, lane);
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
  if (i < n) x[i] *= sigmoid(gate[i]);
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

// CTA l: layer l's pairs, a thread each (rope_pair: rope_angles' arithmetic).
__global__ void rope_table_kernel(float2* out, int64_t stride, const RopeTableLayer* layers, DevicePos pos) {
  const RopeTableLayer L = layers[blockIdx.x];
  const int64_t p = rope_position(pos, 0);
  pdl_begin();  // the table may still be read by the previous step's last kernels
  for (int i = threadIdx.x; i < L.rope_dims / 2; i += blockDim.x)
    out[blockIdx.x * stride + i] = rope_pair(L.inv_freq, L.theta, L.rope_dims, p, i);
}

}  // namespace

cudaError_t rope_table(float2* out, int64_t stride, const RopeTableLayer* layers, int n_layers, DevicePos pos,
                       cudaStream_t stream) {
  if (n_layers <= 0) return cudaSuccess;
  if (!out || !layers || n_layers > 65535) return cudaErrorInvalidValue;
  return launch_pdl(rope_table_kernel, dim3(static_cast<unsigned>(n_layers)), dim3(128), 0, stream, out, stride, layers,
                    pos);
}

cudaError_t qk_rope_store(const QkRopeArgs& a, int n_tokens, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (a.head_dim > kMaxHeadDim || a.rope_dims > a.head_dim || (a.q_stride != 0 && a.q_stride != a.head_dim) ||
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
