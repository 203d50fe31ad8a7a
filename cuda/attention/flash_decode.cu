// Split-K decode attention (cuda/attention/flash.cuh, flash_decode).
//
// split_kernel, a CTA of 8 warps per (KV head g, split s, token t), keys [lo, hi] of the split
// (at most 128):
//  1. scores: two threads per key, each half a row: D / 16 independent 16-byte loads per thread
//     in flight, dot products against the group's G query rows (shared memory, broadcast reads),
//     one shuffle to add the halves. One read of K serves the G heads of the group.
//  2. per head: max, exp, sum over the split (a warp per head).
//  3. P V: warps split the keys (16 each), lanes the row (D / 32 elements); each lane issues the
//     loads of 8 keys before using any; G x D / 32 accumulators per lane, merged across the warps
//     in warp order through shared memory. Unnormalized O and (max, sum) go to the scratch.
// merge_kernel, a CTA per (query head, token): O = sum_s e^(m_s - M) O_s / sum_s e^(m_s - M) l_s.
//
// Version 1 (4 warps, a warp per key in both phases, two keys in flight) was latency bound: 68 us
// for a Qwen3-8B layer at depth 4096 (16.8 MB, 246 GB/s) and 38 us at depth 128 (microbench).
#include <cuda_fp16.h>
#include <math.h>

#include "cuda/attention/flash.cuh"
#include "cuda/attention/kv_load.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32, kSplit = kFlashDecodeSplit, kMaxGroup = kFlashDecodeMaxGroup;
static_assert(kSplit * 2 == kThreads, "two threads per key in the score phase");
static_assert(kMaxGroup <= kWarps, "a warp per head in the softmax phase");

// Kv: const float*, const __half* or KvQ8 (kv_load.cuh): the cache as a pointer-like value.
template <typename Kv, int D>
__global__ void __launch_bounds__(kThreads) split_kernel(float* part_o, float2* part_ml, const float* q, Kv kc, Kv vc,
                                                         int n_head, int n_head_kv, DevicePos pos, int window,
                                                         float scale, int n_splits) {
  constexpr int kPer = D / 32, kHalf = D / 2, kKeysPerStep = 8;
  __shared__ alignas(16) float qs[kMaxGroup][D];
  __shared__ float sc[kMaxGroup][kSplit];
  __shared__ float red[kMaxGroup][D];
  __shared__ float2 ml[kMaxGroup];
  pdl_begin();
  const int g = blockIdx.x, s = blockIdx.y, t = blockIdx.z, G = n_head / n_head_kv;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t p = pos.base + t + (pos.dev ? *pos.dev : 0);
  const int64_t first = window > 0 ? max(int64_t{0}, p - window + 1) : 0;
  const int64_t lo = max(first, int64_t{s} * kSplit), hi = min(p, int64_t{s + 1} * kSplit - 1);
  const int64_t slot0 = (int64_t{t} * n_head + int64_t{g} * G) * n_splits + s;  // head i: slot0 + i * n_splits
  if (lo > hi) {  // nothing of this split is visible (past the position, or before the window)
    if (threadIdx.x < G) part_ml[slot0 + threadIdx.x * n_splits] = make_float2(-INFINITY, 0.0f);
    return;
  }
  const int64_t kvw = int64_t{n_head_kv} * D;
  const int n = static_cast<int>(hi - lo + 1);
  for (int i = threadIdx.x; i < G * D; i += kThreads) {
    qs[i / D][i % D] = q[(int64_t{t} * n_head + int64_t{g} * G) * D + i] * scale;
    red[i / D][i % D] = 0.0f;
  }
  __syncthreads();

  // 1. Scores: thread 2j + h takes half h of key j.
  {
    const int j = threadIdx.x / 2, h = threadIdx.x % 2;
    float acc[kMaxGroup] = {};
    if (j < n) {
      const Kv row = kc + ((lo + j) * kvw + g * D + h * kHalf);
      float k[kHalf / 8][8];
#pragma unroll
      for (int c = 0; c < kHalf / 8; ++c) load8(row + 8 * c, k[c]);
#pragma unroll
      for (int c = 0; c < kHalf / 8; ++c)
#pragma unroll
        for (int i = 0; i < kMaxGroup; ++i)
          if (i < G) {
            const float4 qa = *reinterpret_cast<const float4*>(&qs[i][h * kHalf + 8 * c]);
            const float4 qb = *reinterpret_cast<const float4*>(&qs[i][h * kHalf + 8 * c + 4]);
            acc[i] += qa.x * k[c][0] + qa.y * k[c][1] + qa.z * k[c][2] + qa.w * k[c][3] + qb.x * k[c][4] +
                      qb.y * k[c][5] + qb.z * k[c][6] + qb.w * k[c][7];
          }
    }
#pragma unroll
    for (int i = 0; i < kMaxGroup; ++i)
      if (i < G) {
        const float other = __shfl_xor_sync(0xffffffffu, acc[i], 1);
        if (j < n && h == 0) sc[i][j] = acc[i] + other;
      }
  }
  __syncthreads();

  // 2. Softmax pieces of the split, a warp per head.
  if (warp < G) {
    const int i = warp;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, sc[i][j]);
    m = warp_max(m);
    float l = 0;
    for (int j = lane; j < n; j += 32) {
      const float e = expf(sc[i][j] - m);
      sc[i][j] = e;
      l += e;
    }
    l = warp_sum(l);
    if (lane == 0) ml[i] = make_float2(m, l);
  }
  __syncthreads();

  // 3. Unnormalized P V: warp w takes keys [16 w, 16 w + 16), 8 in flight per lane.
  float acc[kMaxGroup][kPer] = {};
  const Kv vbase = vc + (lo * kvw + g * D + lane * kPer);
  for (int j0 = warp * (kSplit / kWarps); j0 < min(n, (warp + 1) * (kSplit / kWarps)); j0 += kKeysPerStep) {
    float v[kKeysPerStep][kPer];
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u)
      if (j0 + u < n) load_pairs<kPer>(vbase + (j0 + u) * kvw, v[u]);
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      if (j0 + u >= n) break;
#pragma unroll
      for (int i = 0; i < kMaxGroup; ++i)
        if (i < G) {
          const float pij = sc[i][j0 + u];
#pragma unroll
          for (int e = 0; e < kPer; ++e) acc[i][e] += pij * v[u][e];
        }
    }
  }
  // The warps' partial sums into red in warp order, one barrier per warp. Not float atomics: on
  // sm_90 a shared-memory float atomicAdd compiles to a CAS spin loop (ATOMS.CAST.SPIN in the
  // SASS), and eight warps spinning on the same G x D addresses were the kernel's fixed cost
  // (14 us per layer at depth ~0 for D = 128, 22 us for D = 256; ncu). The order is now fixed too.
  for (int w = 0; w < kWarps; ++w) {
    if (warp == w && w * (kSplit / kWarps) < n)  // warps past the split's keys hold zeros
#pragma unroll
      for (int i = 0; i < kMaxGroup; ++i)
        if (i < G)
#pragma unroll
          for (int e = 0; e < kPer; ++e) red[i][lane * kPer + e] += acc[i][e];
    __syncthreads();
  }
  for (int i = threadIdx.x; i < G * D; i += kThreads)
    part_o[(slot0 + int64_t{i / D} * n_splits) * D + i % D] = red[i / D][i % D];
  if (threadIdx.x < G) part_ml[slot0 + threadIdx.x * n_splits] = ml[threadIdx.x];
}

// Only the splits that hold visible keys, [first / kSplit, p / kSplit]: the grid covers n_ctx (the
// captured graph serves every position), but at position p only those wrote partials; reading
// all n_ctx / 128 of them cost a round trip each (37 at n_ctx 4616). Loads of four splits are
// issued before any is used.
__global__ void merge_kernel(float* out, const float* part_o, const float2* part_ml, int n_head, int D, int n_splits,
                             DevicePos pos, int window) {
  pdl_begin();
  const int h = blockIdx.x, t = blockIdx.y;
  const int64_t slot0 = (int64_t{t} * n_head + h) * n_splits;
  const int64_t p = pos.base + t + (pos.dev ? *pos.dev : 0);
  const int64_t first = window > 0 ? max(int64_t{0}, p - window + 1) : 0;
  const int s_lo = static_cast<int>(first / kSplit), s_end = static_cast<int>(min(int64_t{n_splits}, p / kSplit + 1));
  float M = -INFINITY;
  for (int s = s_lo; s < s_end; ++s) {
    const float2 v = part_ml[slot0 + s];
    if (v.y > 0) M = fmaxf(M, v.x);
  }
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float L = 0, o = 0;
#pragma unroll 4
    for (int s = s_lo; s < s_end; ++s) {
      const float2 v = part_ml[slot0 + s];
      const float po = part_o[(slot0 + s) * D + d];
      const float w = v.y > 0 ? expf(v.x - M) : 0.0f;  // an empty split (none in range) adds nothing
      L += w * v.y;
      o += v.y > 0 ? w * po : 0.0f;
    }
    out[(int64_t{t} * n_head + h) * D + d] = o / L;
  }
}

int splits_for(int n_ctx) { return (n_ctx + kSplit - 1) / kSplit; }

template <typename Kv, int D>
cudaError_t launch_split(dim3 grid, float* part_o, float2* part_ml, const float* q, Kv kc, Kv vc, int n_head,
                         int n_head_kv, DevicePos pos, int window, float scale, int n_splits, cudaStream_t stream) {
  return launch_pdl(split_kernel<Kv, D>, grid, dim3(kThreads), 0, stream, part_o, part_ml, q, kc, vc, n_head,
                    n_head_kv, pos, window, scale, n_splits);
}

}  // namespace

bool flash_decode_supports(int head_dim, int n_head, int n_head_kv) {
  return (head_dim == 64 || head_dim == 128 || head_dim == 256) && n_head_kv > 0 && n_head % n_head_kv == 0 &&
         n_head / n_head_kv <= kMaxGroup;
}

int64_t flash_decode_scratch(int n_ctx, int n_tokens, int n_head, int head_dim) {
  return int64_t{n_tokens} * n_head * splits_for(n_ctx) * (head_dim + 2);
}

cudaError_t flash_decode(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv,
                         float* scratch, int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos,
                         int window, float scale, int n_ctx, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (n_tokens > kFlashDecodeMaxTokens || !flash_decode_supports(head_dim, n_head, n_head_kv) || n_ctx <= 0)
    return cudaErrorInvalidValue;
  const int64_t kvw = int64_t{n_head_kv} * head_dim;
  const int n_splits = splits_for(n_ctx);
  float* part_o = scratch;
  float2* part_ml = reinterpret_cast<float2*>(scratch + int64_t{n_tokens} * n_head * n_splits * head_dim);
  const dim3 grid(static_cast<unsigned>(n_head_kv), static_cast<unsigned>(n_splits), static_cast<unsigned>(n_tokens));
  auto go = [&](auto launcher, auto kc, auto vc) {
    return launcher(grid, part_o, part_ml, q, kc, vc, n_head, n_head_kv, pos, window, scale, n_splits, stream);
  };
  const auto* kf = static_cast<const float*>(k_cache);
  const auto* vf = static_cast<const float*>(v_cache);
  const auto* kh = static_cast<const __half*>(k_cache);
  const auto* vh = static_cast<const __half*>(v_cache);
  const auto* kb = static_cast<const __nv_bfloat16*>(k_cache);
  const auto* vb = static_cast<const __nv_bfloat16*>(v_cache);
  const KvQ8 k8 = kv_q8(k_cache, n_ctx, kvw), v8 = kv_q8(v_cache, n_ctx, kvw);
  const KvQ4 k4 = kv_q4(k_cache, n_ctx, kvw), v4 = kv_q4(v_cache, n_ctx, kvw);
  const KvFp8 kp{static_cast<const uint8_t*>(k_cache), 0}, vp{static_cast<const uint8_t*>(v_cache), 0};
  constexpr int kTypes = 8;  // KvDtype values, with room
  const int64_t elems = int64_t{n_ctx} * kvw;
  const KvAny ka{static_cast<const uint8_t*>(k_cache), elems, kv.k, 0}, va{static_cast<const uint8_t*>(v_cache), elems, kv.v, 0};
  const int type = kv.k == kv.v ? static_cast<int>(kv.k) : kTypes - 1;  // K != V: the run-time typed loader
  cudaError_t e;
  switch (head_dim * kTypes + type) {  // the dispatch table: head size x cache type
    case 64 * kTypes + 0: e = go(launch_split<const float*, 64>, kf, vf); break;
    case 64 * kTypes + 1: e = go(launch_split<const __half*, 64>, kh, vh); break;
    case 64 * kTypes + 2: e = go(launch_split<KvQ8, 64>, k8, v8); break;
    case 64 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 64>, kb, vb); break;
    case 64 * kTypes + 4: e = go(launch_split<KvQ4, 64>, k4, v4); break;
    case 64 * kTypes + 5: e = go(launch_split<KvFp8, 64>, kp, vp); break;
    case 64 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 64>, ka, va); break;
    case 128 * kTypes + 0: e = go(launch_split<const float*, 128>, kf, vf); break;
    case 128 * kTypes + 1: e = go(launch_split<const __half*, 128>, kh, vh); break;
    case 128 * kTypes + 2: e = go(launch_split<KvQ8, 128>, k8, v8); break;
    case 128 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 128>, kb, vb); break;
    case 128 * kTypes + 4: e = go(launch_split<KvQ4, 128>, k4, v4); break;
    case 128 * kTypes + 5: e = go(launch_split<KvFp8, 128>, kp, vp); break;
    case 128 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 128>, ka, va); break;
    case 256 * kTypes + 0: e = go(launch_split<const float*, 256>, kf, vf); break;
    case 256 * kTypes + 1: e = go(launch_split<const __half*, 256>, kh, vh); break;
    case 256 * kTypes + 2: e = go(launch_split<KvQ8, 256>, k8, v8); break;
    case 256 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 256>, kb, vb); break;
    case 256 * kTypes + 4: e = go(launch_split<KvQ4, 256>, k4, v4); break;
    case 256 * kTypes + 5: e = go(launch_split<KvFp8, 256>, kp, vp); break;
    case 256 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 256>, ka, va); break;
    default: return cudaErrorInvalidValue;
  }
  if (e != cudaSuccess) return e;
  return launch_pdl(merge_kernel, dim3(static_cast<unsigned>(n_head), static_cast<unsigned>(n_tokens)),
                    dim3(static_cast<unsigned>(head_dim)), 0, stream, out, part_o, part_ml, n_head, head_dim, n_splits,
                    pos, window);
}

}  // namespace bw24::cuda
