#include <math.h>

#include "cuda/common/check.cuh"
#include "cuda/ops/ops.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void rope_kernel(float* x, int n_heads, int head_dim, int rope_dims, int64_t pos0, float theta, bool neox) {
  const int t = blockIdx.y, h = blockIdx.x, half = rope_dims / 2;
  float* xh = x + (static_cast<size_t>(t) * n_heads + h) * head_dim;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    // Angles in double, as lib/ref computes them (fp32 loses digits at long positions).
    double freq = pow(static_cast<double>(theta), -2.0 * i / rope_dims);
    double angle = static_cast<double>(pos0 + t) * freq;
    float c = static_cast<float>(cos(angle)), s = static_cast<float>(sin(angle));
    int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    float x0 = xh[a], x1 = xh[b];
    xh[a] = x0 * c - x1 * s;
    xh[b] = x1 * c + x0 * s;
  }
}

__global__ void gated_act_kernel(float* y, const float* gate, const float* up, int64_t n, int act) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  float g = gate[i];
  float a = act == 0 ? g / (1.0f + expf(-g))
                     : 0.5f * g * (1.0f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g)));
  y[i] = a * up[i];
}

__global__ void add_kernel(float* x, const float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void kv_store_kernel(float* kc, float* vc, const float* k, const float* v, int64_t n, int kv_width,
                                int64_t pos0) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  int64_t dst = pos0 * kv_width + i;
  kc[dst] = k[i];
  vc[dst] = v[i];
}

__global__ void attention_kernel(float* out, const float* q, const float* kc, const float* vc, float* scores,
                                 int n_head, int n_head_kv, int D, int64_t pos0, int window, float scale, int n_ctx) {
  const int h = blockIdx.x, t = blockIdx.y, g = h / (n_head / n_head_kv);
  const int64_t p = pos0 + t, first = window > 0 ? max(static_cast<int64_t>(0), p - window + 1) : 0;
  const int kvw = n_head_kv * D;
  const float* qh = q + (static_cast<size_t>(t) * n_head + h) * D;
  float* s = scores + (static_cast<size_t>(t) * n_head + h) * n_ctx;
  __shared__ float red[kThreads / 32];
  __shared__ float bcast;
  // Scores and their max.
  float mx = -INFINITY;
  for (int64_t j = first + threadIdx.x; j <= p; j += kThreads) {
    const float* kj = kc + j * kvw + g * D;
    float acc = 0;
    for (int d = 0; d < D; ++d) acc += qh[d] * kj[d];
    acc *= scale;
    s[j] = acc;
    mx = fmaxf(mx, acc);
  }
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
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
    for (int64_t j = first; j <= p; ++j) acc += s[j] * vc[j * kvw + g * D + d];
    oh[d] = acc * inv;
  }
}

}  // namespace

cudaError_t rope(float* x, int n_tokens, int n_heads, int head_dim, int rope_dims, int64_t pos0, float theta,
                 bool neox, cudaStream_t stream) {
  if (n_tokens <= 0 || rope_dims <= 0) return cudaSuccess;
  rope_kernel<<<dim3(n_heads, n_tokens), 64, 0, stream>>>(x, n_heads, head_dim, rope_dims, pos0, theta, neox);
  return cudaGetLastError();
}

cudaError_t gated_act(float* y, const float* gate, const float* up, int64_t n, int act, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  gated_act_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, gate, up, n, act);
  return cudaGetLastError();
}

cudaError_t add_inplace(float* x, const float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t kv_store(float* k_cache, float* v_cache, const float* k, const float* v, int n_tokens, int kv_width,
                     int64_t pos0, cudaStream_t stream) {
  int64_t n = static_cast<int64_t>(n_tokens) * kv_width;
  if (n <= 0) return cudaSuccess;
  kv_store_kernel<<<blocks_for(n), kThreads, 0, stream>>>(k_cache, v_cache, k, v, n, kv_width, pos0);
  return cudaGetLastError();
}

cudaError_t attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* scores,
                      int n_tokens, int n_head, int n_head_kv, int head_dim, int64_t pos0, int window, float scale,
                      int n_ctx, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  attention_kernel<<<dim3(n_head, n_tokens), kThreads, 0, stream>>>(out, q, k_cache, v_cache, scores, n_head,
                                                                    n_head_kv, head_dim, pos0, window, scale, n_ctx);
  return cudaGetLastError();
}

}  // namespace bw24::cuda
