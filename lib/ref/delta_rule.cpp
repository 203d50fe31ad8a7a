#include "lib/ref/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bw24::ref {

void gated_delta_recurrent(const float* q, const float* k, const float* v, const float* g, const float* beta,
                           int64_t n, int64_t dk, int64_t dv, float* S, float* out) {
  std::vector<float> kv(static_cast<size_t>(dv));
  for (int64_t t = 0; t < n; ++t) {
    const float* kt = k + t * dk;
    const float* qt = q + t * dk;
    const float decay = std::exp(g[t]);
    for (int64_t i = 0; i < dk * dv; ++i) S[i] *= decay;
    std::fill(kv.begin(), kv.end(), 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) kv[j] += S[i * dv + j] * kt[i];
    for (int64_t j = 0; j < dv; ++j) kv[j] = (v[t * dv + j] - kv[j]) * beta[t];  // delta
    float* o = out + t * dv;
    std::fill(o, o + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) {
        S[i * dv + j] += kt[i] * kv[j];
        o[j] += S[i * dv + j] * qt[i];
      }
  }
}

void gated_delta_chunked(const float* q, const float* k, const float* v, const float* g, const float* beta,
                         int64_t n, int64_t dk, int64_t dv, int64_t chunk, float* S, float* out) {
  const int64_t C = std::max<int64_t>(1, chunk);
  std::vector<float> G(C), delta(C * dv), s0k(C * dv), s0q(C * dv), next(dk * dv);
  auto dot = [&](const float* a, const float* b) {
    float s = 0;
    for (int64_t i = 0; i < dk; ++i) s += a[i] * b[i];
    return s;
  };
  for (int64_t c0 = 0; c0 < n; c0 += C) {
    const int64_t m = std::min(C, n - c0);
    const float *qc = q + c0 * dk, *kc = k + c0 * dk, *vc = v + c0 * dv;
    float acc = 0;
    for (int64_t i = 0; i < m; ++i) G[i] = acc += g[c0 + i];
    // S0^T k_i and S0^T q_i for every token of the chunk (one pass over the state).
    std::fill(s0k.begin(), s0k.end(), 0.0f);
    std::fill(s0q.begin(), s0q.end(), 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t a = 0; a < dk; ++a)
        for (int64_t j = 0; j < dv; ++j) {
          s0k[i * dv + j] += S[a * dv + j] * kc[i * dk + a];
          s0q[i * dv + j] += S[a * dv + j] * qc[i * dk + a];
        }
    // Forward substitution of (I + L) delta = B.
    for (int64_t i = 0; i < m; ++i) {
      const float bi = beta[c0 + i], ei = std::exp(G[i]);
      float* di = &delta[i * dv];
      for (int64_t j = 0; j < dv; ++j) di[j] = bi * (vc[i * dv + j] - ei * s0k[i * dv + j]);
      for (int64_t p = 0; p < i; ++p) {
        const float l = bi * std::exp(G[i] - G[p]) * dot(kc + i * dk, kc + p * dk);
        for (int64_t j = 0; j < dv; ++j) di[j] -= l * delta[p * dv + j];
      }
    }
    // Outputs.
    for (int64_t i = 0; i < m; ++i) {
      float* o = out + (c0 + i) * dv;
      const float ei = std::exp(G[i]);
      for (int64_t j = 0; j < dv; ++j) o[j] = ei * s0q[i * dv + j];
      for (int64_t p = 0; p <= i; ++p) {
        const float w = std::exp(G[i] - G[p]) * dot(qc + i * dk, kc + p * dk);
        for (int64_t j = 0; j < dv; ++j) o[j] += w * delta[p * dv + j];
      }
    }
    // State at the end of the chunk.
    const float eC = std::exp(G[m - 1]);
    for (int64_t a = 0; a < dk; ++a)
      for (int64_t j = 0; j < dv; ++j) {
        float s = eC * S[a * dv + j];
        for (int64_t p = 0; p < m; ++p) s += std::exp(G[m - 1] - G[p]) * kc[p * dk + a] * delta[p * dv + j];
        next[a * dv + j] = s;
      }
    std::copy(next.begin(), next.end(), S);
  }
}

void causal_conv_silu_step(const float* taps, int64_t C, int64_t K, float* state, const float* in, float* y) {
  for (int64_t c = 0; c < C; ++c) {
    float acc = taps[c * K + K - 1] * in[c];
    for (int64_t j = 0; j < K - 1; ++j) acc += taps[c * K + j] * state[j * C + c];
    y[c] = acc / (1.0f + std::exp(-acc));
  }
  if (K > 1) {
    std::copy(state + C, state + (K - 1) * C, state);
    std::copy_n(in, C, state + (K - 2) * C);
  }
}

void l2norm_qk(float* y, int64_t Hk, int64_t dk, float q_scale) {
  for (int64_t h = 0; h < 2 * Hk; ++h) {
    float* v = y + h * dk;
    double ss = 0;
    for (int64_t i = 0; i < dk; ++i) ss += double(v[i]) * v[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss) + 1e-6f) * (h < Hk ? q_scale : 1.0f);
    for (int64_t i = 0; i < dk; ++i) v[i] *= inv;
  }
}

float delta_beta(float b) { return 1.0f / (1.0f + std::exp(-b)); }

float delta_log_decay(float a, float dt_bias, float neg_a) {
  const float x = a + dt_bias;
  return neg_a * (x > 20.0f ? x : std::log1p(std::exp(x)));
}

}  // namespace bw24::ref
