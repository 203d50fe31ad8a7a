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
//
// gdn_decode (passes below kGdnChunkedFrom tokens): both in one CTA per value head, plus the
// out_proj's int8 input, so a decode step's delta-net mixer is 4 launches, not 6 (norm, in
// products, this, out_proj). Why: in the captured Qwen3.5-9B step the mixer cost 29.5 us a layer
// (BW24_ABLATE, next54) against ~11 us for its 38 MB of weights; each launch boundary in the PDL
// chain costs an L2 round trip or two after its wait, and the state's 64 KB a head was read only
// after the wait. Here the conv taps and history, the state and the head's constants are read
// before the wait (nothing in the pass writes them), the q / k / v conv of the CTA's own channels
// runs on threads [0, 2 dk + dv) (the Hv / Hk CTAs of a key head compute its q and k alike), and
// the outputs are quantized in blocks of 32 as rmsnorm_q8 would. The helpers (conv_token,
// recur_token, gated_out, store_act_q8) are the separate kernels' own, so the bits are the same
// (bw24-kernel-check gdn; the GPU test of fused launches).
#include <math.h>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/deltanet/gdn.cuh"

namespace bw24::cuda {
namespace {

constexpr int kMaxTaps = 8, kConvThreads = 128, kParts = 4, kMaxDk = 128, kMaxDv = 128;
constexpr int kChunks = kMaxDk / (4 * kParts);  // float4 chunks of a state column per thread

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// One token of the causal conv for a thread's channel: SiLU(taps . [history, x]), the history
// then shifted to end with x. Registers indexed by compile-time j only (K - 1 as an index would
// put them in local memory). Both the conv kernel and the fused decode step use it, so a channel's
// value is the same bits either way.
__device__ __forceinline__ float conv_token(const float (&w)[kMaxTaps], float (&hist)[kMaxTaps], float x, int K) {
  // Selects, not a store guarded by j == K - 2: that one the compiler turned into a store at
  // the dynamic index K - 2, which put the history in local memory.
  float acc = 0;
#pragma unroll
  for (int j = 0; j < kMaxTaps; ++j)
    if (j < K) acc += w[j] * (j < K - 1 ? hist[j] : x);
#pragma unroll
  for (int j = 0; j < kMaxTaps - 1; ++j)
    if (j < K - 1) hist[j] = j < K - 2 ? hist[j + 1] : x;
  return silu(acc);
}
// A q or k element after its head's l2 norm (sum of squares ss; q also times q_scale).
__device__ __forceinline__ float l2_scaled(float v, float scale, float ss) { return v * (scale / sqrtf(ss + 1e-6f)); }

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
      v = conv_token(w, hist, in[int64_t{t} * C + c], K);
    }
    if (normed) v = l2_scaled(v, scale, block_sum(v * v, red));  // uniform per CTA: every thread sums
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

// Value head hv's key head and its b / a indices (separate projections index by hv; the fused
// in_ba by key head group).
struct HeadIndex {
  int hk, b_index, a_index;
};
__device__ __forceinline__ HeadIndex head_index(const GdnStepArgs& a, int hv) {
  const int r = a.Hv / a.Hk, g = hv / r, jr = hv % r;
  return {a.v_heads_tiled ? hv % a.Hk : hv / r, a.ba_fused ? g * 2 * r + jr : hv, a.ba_fused ? g * 2 * r + r + jr : hv};
}

// A token's gates from its raw b and a: beta = sigmoid(b), decay = e^(neg_a softplus(a + dt_bias)).
__device__ __forceinline__ float2 raw_gates(float b, float a_raw, float dt_bias, float neg_a) {
  const float beta = 1.0f / (1.0f + expf(-b));
  const float ax = a_raw + dt_bias;
  return make_float2(beta, expf(neg_a * (ax > 20.0f ? ax : log1pf(expf(ax)))));
}
// Token t's raw b and a of value head hv (x: b, y: a).
__device__ __forceinline__ float2 token_ba(const GdnStepArgs& a, int t, HeadIndex h) {
  return make_float2(a.beta_raw[int64_t{t} * a.ba_stride + h.b_index], a.alpha_raw[int64_t{t} * a.ba_stride + h.a_index]);
}
// Token t's gates of value head hv.
__device__ __forceinline__ float2 token_gates(const GdnStepArgs& a, int t, HeadIndex h, float dt_bias, float neg_a) {
  const float2 ba = token_ba(a, t, h);
  return raw_gates(ba.x, ba.y, dt_bias, neg_a);
}

// One token of the recurrence on part p of a state column (s, chunks of it): decay, S^T k
// (4-way shuffle sum), delta = beta (v - S^T k), S += k delta, and S^T q, which every part returns.
// qs, ks: the token's q and k head in shared memory.
__device__ __forceinline__ float recur_token(float4 (&s)[kChunks], const float* qs, const float* ks, float v,
                                             float2 gates, int p, int chunks) {
  const float beta = gates.x, decay = gates.y;
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
  return o;
}

// Column j's output after the gated RMSNorm over the head (ss: the head's sum of o^2).
__device__ __forceinline__ float gated_out(const GdnStepArgs& a, float o, float ss, float norm_w, float z) {
  const float inv = rsqrtf(ss / a.dv + a.eps);
  return o * inv * norm_w * silu(z);
}

// s[i] = rows 4 c .. 4 c + 3 of column j, chunk c = p + kParts i: the 4 threads of a column read
// 64 contiguous bytes per load, a warp 8 such runs (16 sectors). Version 1 gave each thread 32
// consecutive rows: a warp's load touched 32 lines, and the 64 KB per head took 36 us (ncu).
__device__ __forceinline__ float4* state_column(const GdnStepArgs& a, int hv, int j) {
  return reinterpret_cast<float4*>(a.state + (int64_t{hv} * a.dv + j) * a.dk);
}

__global__ void __launch_bounds__(kMaxDv * kParts) step_kernel(GdnStepArgs a, int n_tokens) {
  __shared__ alignas(16) float qs[kMaxDk];
  __shared__ alignas(16) float ks[kMaxDk];
  __shared__ float red[32];
  pdl_begin();
  const int hv = blockIdx.x, j = threadIdx.x / kParts, p = threadIdx.x % kParts;
  const int chunks = a.dk / (4 * kParts);
  const HeadIndex h = head_index(a, hv);
  const bool col = j < a.dv;
  const int64_t C = 2 * int64_t{a.Hk} * a.dk + int64_t{a.Hv} * a.dv, Vd = int64_t{a.Hv} * a.dv;
  float4 s[kChunks];
  float4* scol = state_column(a, hv, j);
  if (col)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) s[i] = scol[p + kParts * i];
  for (int t = 0; t < n_tokens; ++t) {
    const float* yt = a.y + int64_t{t} * C;
    __syncthreads();  // qs/ks of the previous token are no longer read
    for (int i = threadIdx.x; i < a.dk; i += blockDim.x) {
      qs[i] = yt[int64_t{h.hk} * a.dk + i];
      ks[i] = yt[int64_t{a.Hk} * a.dk + int64_t{h.hk} * a.dk + i];
    }
    __syncthreads();
    const float2 gates = token_gates(a, t, h, a.dt_bias[hv], a.neg_a[hv]);
    const float v = col ? yt[2 * int64_t{a.Hk} * a.dk + int64_t{hv} * a.dv + j] : 0.0f;
    const float o = recur_token(s, qs, ks, v, gates, p, chunks);
    // Gated RMSNorm over the head's dv outputs (part 0 of each column counts it once).
    const float ss = block_sum(col && p == 0 ? o * o : 0.0f, red);
    if (col && p == 0)
      a.out[int64_t{t} * Vd + int64_t{hv} * a.dv + j] =
          gated_out(a, o, ss, a.norm_w[j], a.z[int64_t{t} * Vd + int64_t{hv} * a.dv + j]);
  }
  if (col)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) scol[p + kParts * i] = s[i];
}

// The decode pass's conv, recurrence and out_proj input in one launch (gdn_decode): CTA hv, thread
// (column j, part p) as step_kernel; threads [0, dk) also own the conv channels of q head hk,
// [dk, 2 dk) those of k head hk, [2 dk, 2 dk + dv) those of v head hv.
// kK, kDk, kDv, kTokens: the shape as constants where the launch knows it (0: read at run time).
// The decode step's instance (Qwen3.5 / Qwen3.6 / Qwen3-Next: K = 4, dk = dv = 128, one token)
// walks no token loop and no predicated tap or chunk loops: 1,656 -> 1,240 SASS instructions,
// 103 -> 83 registers (cuobjdump, sm_90a); every other shape takes <0, 0, 0, 0>, the same code as
// before. H200, tg128 `-p 16 -r 3`, generic -> typed, two rounds (next185): Qwen3.5-9B Q4_K_M
// 551.4 / 551.8 -> 562.2 / 557.7, Qwen3.6-35B-A3B 500.3 / 499.5 -> 513.6 / 508.6. Code a
// latency-bound kernel walks costs it time (flash_decode.cu's typed writer, round 31).
template <int kK, int kDk, int kDv, int kTokens>
__global__ void __launch_bounds__(kMaxDv * kParts) decode_kernel(GdnDecodeArgs fa, int n_tokens_arg) {
  GdnDecodeArgs f = fa;
  if constexpr (kK > 0) f.K = kK;
  if constexpr (kDk > 0) f.step.dk = kDk;
  if constexpr (kDv > 0) f.step.dv = kDv;
  const int n_tokens = kTokens > 0 ? kTokens : n_tokens_arg;
  const GdnStepArgs& a = f.step;
  __shared__ alignas(16) float qs[kMaxDk];
  __shared__ alignas(16) float ks[kMaxDk];
  __shared__ float vs[kMaxDv], os[kMaxDv], red[32], qk_ss[2 * kMaxDk / 32];
  __shared__ bool history_writer;
  pdl_trigger();
  const int hv = blockIdx.x, tid = threadIdx.x, j = tid / kParts, p = tid % kParts, warp = tid / 32;
  const int chunks = a.dk / (4 * kParts), dk = a.dk, K = f.K;
  const HeadIndex h = head_index(a, hv);
  const bool col = j < a.dv;
  const int64_t C = 2 * int64_t{a.Hk} * dk + int64_t{a.Hv} * a.dv, Vd = int64_t{a.Hv} * a.dv;
  const int64_t c = tid < dk           ? int64_t{h.hk} * dk + tid
                    : tid < 2 * dk     ? int64_t{a.Hk} * dk + int64_t{h.hk} * dk + (tid - dk)
                    : tid < 2 * dk + a.dv ? 2 * int64_t{a.Hk} * dk + int64_t{hv} * a.dv + (tid - 2 * dk)
                                          : -1;
  const bool conv = c >= 0, qk = tid < 2 * dk;
  // Before the PDL wait, what no kernel of this pass writes: the taps, the conv history and the
  // recurrent state (both last written by the previous pass, which ended before this one began),
  // the head's constants. Their DRAM round trip overlaps the in_qkv GEMV instead of following it.
  float w[kMaxTaps], hist[kMaxTaps];
  if (conv) {
#pragma unroll
    for (int i = 0; i < kMaxTaps; ++i)
      if (i < K) w[i] = f.taps[c * K + i];
#pragma unroll
    for (int i = 0; i < kMaxTaps - 1; ++i)
      if (i < K - 1) hist[i] = f.conv_state[int64_t{i} * C + c];
  }
  float4 s[kChunks];
  float4* scol = state_column(a, hv, j);
  if (col)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) s[i] = scol[p + kParts * i];
  const float dt_bias = a.dt_bias[hv], neg_a = a.neg_a[hv], norm_w = col ? a.norm_w[j] : 0.0f;
  const bool held = f.hold && *f.hold;  // written before this pass began, as the state
  pdl_wait();
  for (int t = 0; t < n_tokens; ++t) {
    // What the pass's earlier kernels wrote for token t, loaded at once: the conv input, the raw
    // gates, the output gate z (else each waits for its own L2 round trip after a barrier). Measured
    // alone in round 26 (gdn-ahead) it gave nothing: the history turn below, then taken before the
    // wait, set the pace. With the turn moved, H200 tg128 `-p 16 -r 3`, two rounds (next195): main
    // -> turn moved -> turn moved and inputs at once, Qwen3.5-9B 557.6 / 560.2 -> 562.4 / 564.5 ->
    // 575.7 / 573.9, Qwen3.6-35B-A3B 511.6 / 511.7 -> 511.4 / 510.9 -> 514.0 / 514.8.
    const int64_t at = int64_t{t} * Vd + int64_t{hv} * a.dv;
    const float x_in = conv ? f.in[int64_t{t} * C + c] : 0.0f;
    const float2 ba = token_ba(a, t, h);
    const float z = col && p == 0 ? a.z[at + j] : 0.0f;
    float v = 0;
    if (conv) v = conv_token(w, hist, x_in, K);
    // The l2 norms of q and k: dk / 32 warps each, their sums added in warp order from zero, as
    // conv_kernel's block_sum adds them (its idle warps add zeros), so the same bits.
    if (qk) {
      const float ss = warp_sum(v * v);
      if (tid % 32 == 0) qk_ss[warp] = ss;
    }
    __syncthreads();  // also: the previous token's qs / ks / vs are no longer read
    if (qk) {
      const int w0 = tid < dk ? 0 : dk / 32;
      float ss = 0;
      for (int i = 0; i < dk / 32; ++i) ss += qk_ss[w0 + i];
      v = l2_scaled(v, tid < dk ? f.q_scale : 1.0f, ss);
      (tid < dk ? qs[tid] : ks[tid - dk]) = v;
    } else if (conv) {
      vs[tid - 2 * dk] = v;
    }
    __syncthreads();
    // The Hv / Hk CTAs of key head hk all read its q and k history; the last of them to have read it
    // writes the new one (a counter per key head, reset by that CTA): whichever CTA started first
    // could otherwise overwrite it before a late one read it. Every thread of this CTA has used its
    // history loads (the first token's conv, before the barrier above), so they have returned, and
    // a later store cannot change what they read; thread 0 takes the CTA's turn here, and uses the
    // answer after the recurrence, so the atomic's round trip runs under it. Taken before the wait
    // (until round 33), with a fence on each side, the turn held each CTA ~2 us there, the fence
    // waiting for the CTA's 64 KB of state loads: the last CTA to start, ~0.8 us before its
    // predecessor's end, passed its wait ~1.8 us after it (Qwen3.5-9B, globaltimer stamps in a
    // timing build, next194; the delta net's step then took ~5 us more to its end).
    unsigned turn = 0;
    if (t == 0 && tid == 0) turn = atomicAdd(&f.turn[h.hk], 1u);
    const float o = recur_token(s, qs, ks, col ? vs[j] : 0.0f, raw_gates(ba.x, ba.y, dt_bias, neg_a), p, chunks);
    if (t == 0 && tid == 0) {  // published by block_sum's barriers; read at the kernel's end
      history_writer = turn == static_cast<unsigned>(a.Hv / a.Hk) - 1;
      if (history_writer) f.turn[h.hk] = 0;
    }
    const float ss = block_sum(col && p == 0 ? o * o : 0.0f, red);
    if (col && p == 0) {
      const float y = gated_out(a, o, ss, norm_w, z);
      a.out[at + j] = y;
      os[j] = y;
    }
    if (f.q8) {  // the head's dv outputs as dv / 32 blocks of the out_proj's int8 input (rmsnorm_q8's, unnormed)
      __syncthreads();
      if (warp < a.dv / 32) {
        const float y = os[tid];
        store_act_q8(y, &f.q8[at + tid], &f.ds[at / 32 + warp]);
      }
    }
  }
  if (col && !held)
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (i < chunks) scol[p + kParts * i] = s[i];
  if (conv && (!qk || history_writer) && !held)
#pragma unroll
    for (int i = 0; i < kMaxTaps - 1; ++i)
      if (i < K - 1) f.conv_state[int64_t{i} * C + c] = hist[i];
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

bool gdn_decode_supports(int n_tokens, int Hk, int Hv, int dk, int dv, int K) {
  return n_tokens >= 1 && n_tokens < kGdnChunkedFrom && n_tokens <= kGdnConvTile && Hk > 0 && Hv % Hk == 0 &&
         dk % 32 == 0 && dk <= kMaxDk && dv % 32 == 0 && dv <= kMaxDv && 2 * dk + dv <= dv * kParts && K >= 1 &&
         K <= kMaxTaps;
}

cudaError_t gdn_decode(const GdnDecodeArgs& f, int n_tokens, cudaStream_t stream) {
  const GdnStepArgs& a = f.step;
  if (n_tokens <= 0) return cudaSuccess;
  if (!gdn_decode_supports(n_tokens, a.Hk, a.Hv, a.dk, a.dv, f.K) || !f.in || !f.conv_state || !f.taps || !f.turn ||
      !f.q8 != !f.ds)
    return cudaErrorInvalidValue;
  const auto kernel = n_tokens == 1 && f.K == 4 && a.dk == 128 && a.dv == 128 ? decode_kernel<4, 128, 128, 1>
                                                                                : decode_kernel<0, 0, 0, 0>;
  return launch_pdl(kernel, dim3(static_cast<unsigned>(a.Hv)), dim3(static_cast<unsigned>(a.dv * kParts)), 0, stream, f,
                    n_tokens);
}

}  // namespace bw24::cuda
