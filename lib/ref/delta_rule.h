// The gated delta rule of one value head (Qwen3.5 / Qwen3-Next linear attention, formats.md §3.5)
// in its two forms, which must agree: the recurrence (decode, one token at a time) and the chunked
// form (prefill: per chunk of C tokens a triangular solve replaces C sequential state updates,
// the shape the GPU kernel will take).
//
// Per token t: S = exp(g_t) S; delta = beta_t (v_t - S^T k_t); S += k_t delta^T; o_t = S^T q_t.
// q, k: [n][dk] (already l2-normalized, q scaled), v: [n][dv], g (log decay <= 0), beta: [n];
// S: [dk][dv], updated in place; out: [n][dv].
#pragma once

#include <cstdint>

namespace bw24::ref {

void gated_delta_recurrent(const float* q, const float* k, const float* v, const float* g, const float* beta,
                           int64_t n, int64_t dk, int64_t dv, float* S, float* out);

// Chunk of C tokens, G_i = sum of g over the chunk up to i, S0 the state at its start:
//   delta_i + beta_i sum_{j<i} exp(G_i - G_j) (k_i . k_j) delta_j = beta_i (v_i - exp(G_i) S0^T k_i)
// (lower-triangular, forward substitution), then
//   o_i = exp(G_i) S0^T q_i + sum_{j<=i} exp(G_i - G_j) (q_i . k_j) delta_j,
//   S = exp(G_C) S0 + sum_j exp(G_C - G_j) k_j delta_j^T.
void gated_delta_chunked(const float* q, const float* k, const float* v, const float* g, const float* beta,
                         int64_t n, int64_t dk, int64_t dv, int64_t chunk, float* S, float* out);

// The pieces around the rule in a Qwen3.5 / Qwen3-Next linear-attention layer, per token (the CPU
// runner's, and the reference the CUDA kernels will be checked against):
//
// Causal depthwise conv (K taps per channel over [state, input]) and SiLU over C channels:
// taps [C][K] (tap K - 1 multiplies the new input), state [K - 1][C] the last inputs, oldest
// first, shifted by one.
void causal_conv_silu_step(const float* taps, int64_t C, int64_t K, float* state, const float* in, float* y);
// y[0, Hk dk) = q heads, y[Hk dk, 2 Hk dk) = k heads: each l2-normalized (eps 1e-6 under the
// root), q also times q_scale (1 / sqrt(dk)).
void l2norm_qk(float* y, int64_t Hk, int64_t dk, float q_scale);
// Gates of a value head from its projections: beta = sigmoid(b); log decay
// g = neg_a * softplus(a + dt_bias) (neg_a = -exp(A_log); softplus(x) = x above 20).
float delta_beta(float b);
float delta_log_decay(float a, float dt_bias, float neg_a);

}  // namespace bw24::ref
