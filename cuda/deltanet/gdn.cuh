// Gated delta net (Qwen3.5 / Qwen3-Next linear attention) on the device (lib/ref/delta_rule.h has
// the math and the CPU reference the kernels are checked against in bw24-kernel-check): the conv
// (token tiles in parallel), and the recurrence token by token (decode: gdn_step) or in chunks of
// 64 tokens (prefill: gdn_chunked, cuda/deltanet/gdn_chunked.cu); gdn_step hands passes of
// kGdnChunkedFrom tokens or more to gdn_chunked.
//
// Channel layout of a layer's in_qkv output (C = 2 Hk dk + Hv dv): q heads, k heads, v heads.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

// Causal depthwise conv + SiLU over C channels for n tokens, then q and k heads l2-normalized
// (q also times q_scale). taps [C][K] f32 (tap K - 1 multiplies the newest input); state
// [K - 1][C] f32, the last inputs oldest first, advanced by n tokens; in, y: [n][C].
// dk <= 256, K <= 8. Tiles of kGdnConvTile tokens run in parallel (a tile's history comes from
// in, or the state before the first token); a second kernel then advances the state.
constexpr int kGdnConvTile = 16, kGdnChunkedFrom = 16;
cudaError_t gdn_conv(float* y, float* state, const float* in, const float* taps, int n_tokens, int64_t C, int K,
                     int Hk, int dk, float q_scale, cudaStream_t stream);

struct GdnStepArgs {
  float* out;              // [n][Hv dv]: gated-RMSNorm'd output heads (the out_proj input)
  float* state;            // [Hv][dv][dk] f32: per value head the transpose of the math's S [dk][dv]
  const float* y;          // [n][C]: gdn_conv's output
  const float* z;          // [n][Hv dv]: the output gate projection
  const float* beta_raw;   // b projection, element (t, hv) at beta_raw[t * ba_stride + ba_index(hv)]
  const float* alpha_raw;  // a projection, same indexing
  int ba_stride;           // floats per token of beta_raw / alpha_raw
  bool ba_fused;           // Qwen3-Next in_ba: per key head group [b (r) | a (r)]; both pointers at it
  const float* dt_bias;    // [Hv]
  const float* neg_a;      // [Hv]: -exp(A_log)
  const float* norm_w;     // [dv]: gated RMSNorm weight
  float eps;
  int Hk, Hv, dk, dv;
  bool v_heads_tiled;      // value head hv reads key head hv % Hk (else hv / (Hv / Hk))
};
// The recurrence for n tokens: per value head beta = sigmoid(b), g = neg_a softplus(a + dt_bias);
// S = e^g S; delta = beta (v - S^T k); S += k delta^T; o = S^T q; out = rmsnorm(o) w silu(z).
// One CTA per value head, 4 threads per state column (dk / 4 rows each, in registers); the state
// is read and written once per call. dk a multiple of 16 up to 128, dv <= 128.
cudaError_t gdn_step(const GdnStepArgs& args, int n_tokens, cudaStream_t stream);

// A decode pass's conv, recurrence and out_proj input in one launch (n_tokens < kGdnChunkedFrom):
// gdn_conv then gdn_step, the same bits (conv output y is not written), and out also as the int8
// GEMV input (rmsnorm_q8 without a norm) where q8 / ds are set. CTA hv computes the conv of the
// channels it reads (q and k head hk, v head hv), so the Hv / Hk CTAs of a key head compute its q
// and k alike; the last of them to read the conv history writes it back, counted in turn.
// The states (conv history, recurrent state, turn) are read before the PDL wait: the call that last
// wrote them must have finished before this one is launched, as a pass boundary ensures (the
// runner's passes begin with a copy, which waits for every kernel before it). Two calls launched
// back to back on one stream do not (the second would read the first's states early).
struct GdnDecodeArgs {
  GdnStepArgs step;   // y unused
  const float* in;    // [n][C]: the in_qkv product (gdn_conv's in)
  float* conv_state;  // [K - 1][C], as gdn_conv's state
  const float* taps;  // [C][K]
  int K;
  float q_scale;
  unsigned* turn;     // [Hk], zero before the first call; each call leaves it zero
  int8_t* q8;         // [n][Hv dv] or null
  float2* ds;         // [n][Hv dv / 32] or null (with q8)
  // Set and nonzero: the pass is held (a run-ahead step fed a stop token, cuda::StepNext): the
  // conv history and the recurrent state stay as they are. Written before the pass's launch.
  const int32_t* hold = nullptr;
};
// Whether gdn_decode takes the shape: 1 <= n < kGdnChunkedFrom, dk and dv multiples of 32 up to
// 128, 2 dk + dv <= 4 dv (the conv channels fit the CTA's threads), K <= 8.
bool gdn_decode_supports(int n_tokens, int Hk, int Hv, int dk, int dv, int K);
cudaError_t gdn_decode(const GdnDecodeArgs& args, int n_tokens, cudaStream_t stream);

// The same recurrence in chunks of 64 tokens (the chunked form of lib/ref gated_delta_chunked):
// one CTA per (value head, 32 of its dv columns), the chunks in order, then the gated RMSNorm as a
// second kernel over out in place. dk <= 128.
cudaError_t gdn_chunked(const GdnStepArgs& args, int n_tokens, cudaStream_t stream);
// Whether gdn_chunked runs on the current device for key width dk: its CTA wants 132 KB of shared
// memory (H100/H200: 227 KB, A100: 163 KB; consumer Blackwell's 99 KB does not fit: gdn_step then
// stays token by token).
bool gdn_chunked_fits(int dk);

}  // namespace bw24::cuda
