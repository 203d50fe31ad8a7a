// Gated delta net decode kernels (cuda/deltanet/gdn.cuh).
//
// gdn_conv: one CTA per q or k head (dk threads: conv, SiLU, then the head's l2 norm as a CTA
// reduction) and one per 128 v channels (conv, SiLU). A thread keeps its channel's K - 1 history
// in registers across the tokens and writes the state back at the end.
//
// gdn_step: one CTA per value head. Thread (column j, part p) of 4 per column holds a quarter of
// column j of S (32 floats for dk = 128, as 8 float4 chunks interleaved with the other parts') in
// registers; the state is kept transposed ([dv][dk]) so a column is contiguous. Per token:
// decay, S^T k (4-way shuffle sum), delta, rank-1 update, S^T q (shuffle sum), gated RMSNorm over
// the head (CTA sum). Bytes: the state, 64 KB per head read + written per call: a Qwen3.5-9B layer
// (32 heads) moves 4 MB, ~1.3 us at 3 TB/s.
#include <math.h>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/deltanet/gdn.cuh"

namespace bw24::cuda {
namespace {

constexpr int kMaxTaps = 8, kConvThreads = 128, kParts = 4, kMaxDk = 128, kMaxDv = 128;
constexpr int kChunks = kMaxDk / (4 * kParts);  // float4 chunks of a state column per thread

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// Sum over the CTA (blockDim.x threads, a multiple of 32); every thread gets it.
__device__ float block_sum(float v, float* scratch /* [32] */) {
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read from the previous call
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  for (int i = 0; i < static_cast<int>(blockDim.x / 32); ++i) total += scratch[i];
  return total;
}

// Tokens [t0, t0 + count) with t0 = blockIdx.y * tile: the history before t0 comes from in, or
// from the state for positions before the first token (state[K - 1 + t] for t < 0). write_state:
// one tile covers every token, so the CTA can leave its history as the new state.
__global__ void conv_kernel(float* y, float* state, const float* in, const float* taps, int n_tokens, int64_t C,
                            int K, int Hk, int dk, float q_scale, int tile, bool write_state) {
  __shared__ float red[32];
  pdl_begin();
  const int t0 = static_cast<int>(blockIdx.y) * tile, t_end = min(n_tokens, t0 + tile);
  const int norm_heads = 2 * Hk;  // CTAs [0, 2 Hk) own one q or k head each, dk threads active
  const bool normed = static_cast<int>(blockIdx.x) < norm_heads;
  const int64_t c = normed ? int64_t{blockIdx.x} * dk + threadIdx.x
                           : int64_t{norm_heads} * dk + int64_t{blockIdx.x - norm_heads} * kConvThreads + threadIdx.x;
  const bool active = normed ? static_cast<int>(threadIdx.x) < dk : c < C;
  float w[kMaxTaps], hist[kMaxTaps];  // taps; the last K - 1 inputs, oldest first
  if (active) {
#pragma unroll
    for (int j = 0; j < kMaxTaps; ++j)
      if (j < K) w[j] = taps[c * K + j];
#pragma unroll
    for (int j = 0; j < kMaxTaps - 1; ++j)
      if (j < K - 1) {
        const int t = t0 - (K - 1) + j;
        hist[j] = t < 0 ? state[int64_t{K - 1 + t} * C + c] : in[int64_t{t} * C + c];
      }
  }
  const float scale = static_cast<int>(blockIdx.x) < Hk ? q_scale : 1.0f;
  for (int t = t0; t < t_end; ++t) {
    float v = 0;
    if (active) {
      // Registers indexed by compile-time j only (K - 1 as an index would put them in local memory).
      const float x = in[int64_t{t} * C + c];
      float acc = 0;
#pragma unroll
      for (int j = 0; j < kMaxTaps; ++j) {
        if (j < K - 1) acc += w[j] * hist[j];
        if (j == K - 1) acc += w[j] * x;
      }
#pragma unroll
      for (int j = 0; j < kMaxTaps - 1; ++j) {
        if (j < K - 2) hist[j] = hist[j + 1];
        if (j == K - 2) hist[j] = x;
      }
      v = silu(acc);
    }
    if (normed) {  // uniform per CTA: every thread takes part in the sum
      const float ss = block_sum(v * v, red);
      v *= scale / sqrtf(ss + 1e-6f);
    }
    if (active) y[int64_t{t} * C + c] = v;
  }
  if (active && write_state)
#pragma unroll
    for (int j = 0; j < kMaxTaps - 1; ++j)
      if (j < K - 1) state[int64_t{j} * C + c] = hist[j];
}

// The conv state after n tokens when the tiles ran in parallel: the last K - 1 inputs, from in or
// (n < K - 1) from the old state shifted by n. In place: row j reads row j + n > j, in order.
__global__ void conv_state_kernel(float* state, const float* in, int n_tokens, int64_t C, int K) {
  pdl_begin();
  const int64_t c = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (c >= C) return;
  for (int j = 0; j < K - 1; ++j) {
    const int t = n_tokens - (K - 1) + j;
    state[int64_t{j} * C + c] = t < 0 ? state[int64_t{K - 1 + t} * C + c] : in[int64_t{t} * C + c];
  }
}

__global__ void __launch_bounds__(kMaxDv * kParts) step_kernel(GdnStepArgs a, int n_tokens) {
  __shared__ alignas(16) float qs[kMaxDk];
  __shared__ alignas(16) float ks[kMaxDk];
  __shared__ float red[32];
  pdl_begin();
  const int hv = blockIdx.x, j = threadIdx.x / kParts, p = threadIdx.x % kParts;
  const int chunks = a.dk / (4 * kParts), r = a.Hv / a.Hk;
  const int hk = a.v_heads_tiled ? hv % a.Hk : hv / r;
  const bool col = j < a.dv;
  const int64_t C = 2 * int64_t{a.Hk} * a.dk + int64_t{a.Hv} * a.dv, Vd = int64_t{a.Hv} * a.dv;
  // b / a of this head: separate projections index by hv; the fused in_ba by key head group.
  const int g = hv / r, jr = hv % r;
  const int b_index = a.ba_fused ? g * 2 * r + jr : hv, a_index = a.ba_fused ? g * 2 * r + r + jr : hv;
  // s[i] = rows 4 c .. 4 c + 3 of column j, chunk c = p + kParts i: the 4 threads of a column read
  // 64 contiguous bytes per load, a warp 8 such runs (16 sectors). Version 1 gave each thread 32
  // consecutive rows: a warp's load touched 32 lines, and the 64 KB per head took 36 us (ncu).
  float4 s[kChunks];
  float4* scol = reinterpret_cast<float4*>(a.state + (int64_t{hv} * a.dv + j) * a.dk);
  if (col)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) s[i] = scol[p + kParts * i];
  for (int t = 0; t < n_tokens; ++t) {
    const float* yt = a.y + int64_t{t} * C;
    __syncthreads();  // qs/ks of the previous token are no longer read
    for (int i = threadIdx.x; i < a.dk; i += blockDim.x) {
      qs[i] = yt[int64_t{hk} * a.dk + i];
      ks[i] = yt[int64_t{a.Hk} * a.dk + int64_t{hk} * a.dk + i];
    }
    __syncthreads();
    const float beta = 1.0f / (1.0f + expf(-a.beta_raw[int64_t{t} * a.ba_stride + b_index]));
    const float ax = a.alpha_raw[int64_t{t} * a.ba_stride + a_index] + a.dt_bias[hv];
    const float decay = expf(a.neg_a[hv] * (ax > 20.0f ? ax : log1pf(expf(ax))));
    float kv = 0;
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) {
        const float4 k4 = *reinterpret_cast<const float4*>(&ks[4 * (p + kParts * i)]);
        s[i].x *= decay, s[i].y *= decay, s[i].z *= decay, s[i].w *= decay;
        kv += s[i].x * k4.x + s[i].y * k4.y + s[i].z * k4.z + s[i].w * k4.w;
      }
    kv += __shfl_xor_sync(0xffffffffu, kv, 1);
    kv += __shfl_xor_sync(0xffffffffu, kv, 2);
    const float v = col ? yt[2 * int64_t{a.Hk} * a.dk + int64_t{hv} * a.dv + j] : 0.0f;
    const float delta = beta * (v - kv);
    float o = 0;
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) {
        const float4 k4 = *reinterpret_cast<const float4*>(&ks[4 * (p + kParts * i)]);
        const float4 q4 = *reinterpret_cast<const float4*>(&qs[4 * (p + kParts * i)]);
        s[i].x += k4.x * delta, s[i].y += k4.y * delta, s[i].z += k4.z * delta, s[i].w += k4.w * delta;
        o += s[i].x * q4.x + s[i].y * q4.y + s[i].z * q4.z + s[i].w * q4.w;
      }
    o += __shfl_xor_sync(0xffffffffu, o, 1);
    o += __shfl_xor_sync(0xffffffffu, o, 2);
    // Gated RMSNorm over the head's dv outputs (part 0 of each column counts it once).
    const float ss = block_sum(col && p == 0 ? o * o : 0.0f, red);
    if (col && p == 0) {
      const float inv = rsqrtf(ss / a.dv + a.eps);
      const float zj = a.z[int64_t{t} * Vd + int64_t{hv} * a.dv + j];
      a.out[int64_t{t} * Vd + int64_t{hv} * a.dv + j] = o * inv * a.norm_w[j] * silu(zj);
    }
  }
  if (col)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) scol[p + kParts * i] = s[i];
}

}  // namespace

cudaError_t gdn_conv(float* y, float* state, const float* in, const float* taps, int n_tokens, int64_t C, int K,
                     int Hk, int dk, float q_scale, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (K < 1 || K > kMaxTaps || dk < 1 || dk > 256 || C < 2 * int64_t{Hk} * dk) return cudaErrorInvalidValue;
  const int64_t v_channels = C - 2 * int64_t{Hk} * dk;
  const unsigned ctas = static_cast<unsigned>(2 * Hk + (v_channels + kConvThreads - 1) / kConvThreads);
  const unsigned threads = static_cast<unsigned>(dk > kConvThreads ? (dk + 31) / 32 * 32 : kConvThreads);
  const int tiles = (n_tokens + kGdnConvTile - 1) / kGdnConvTile;
  BW24_CUDA_TRY(launch_pdl(conv_kernel, dim3(ctas, static_cast<unsigned>(tiles)), dim3(threads), 0, stream, y, state, in,
                           taps, n_tokens, C, K, Hk, dk, q_scale, kGdnConvTile, tiles == 1));
  if (tiles == 1) return cudaSuccess;
  return launch_pdl(conv_state_kernel, dim3(static_cast<unsigned>((C + 255) / 256)), dim3(256), 0, stream, state, in,
                    n_tokens, C, K);
}

cudaError_t gdn_step(const GdnStepArgs& a, int n_tokens, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (n_tokens >= kGdnChunkedFrom && gdn_chunked_fits(a.dk)) return gdn_chunked(a, n_tokens, stream);
  if (a.Hk <= 0 || a.Hv % a.Hk != 0 || a.dk % (4 * kParts) != 0 || a.dk > kMaxDk || a.dv < 1 || a.dv > kMaxDv ||
      (a.dv * kParts) % 32 != 0)
    return cudaErrorInvalidValue;
  return launch_pdl(step_kernel, dim3(static_cast<unsigned>(a.Hv)), dim3(static_cast<unsigned>(a.dv * kParts)), 0,
                    stream, a, n_tokens);
}

}  // namespace bw24::cuda
