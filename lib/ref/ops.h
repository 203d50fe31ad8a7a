// The CPU reference backend: naive, obviously-correct fp32 implementations of every op. It is
// the oracle every GPU kernel is compared with and the fallback when no GPU is present. Never
// optimized beyond splitting rows across threads; if it gets slow, tests use smaller shapes.
#pragma once

#include <cstdint>

#include "lib/core/thread_pool.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::ref {

// y = x_hat * w (or x_hat * (1 + w)), x_hat = x / sqrt(mean(x^2) + eps). w may be null (= 1).
void rmsnorm(float* y, const float* x, const float* w, int64_t n, float eps, bool one_plus);

// Rotate the first rope_dims channels of one head in place at position pos.
// neox = false: pairs (x[2i], x[2i+1]); neox = true: pairs (x[i], x[i + rope_dims/2]).
// Angle of pair i: pos * theta^(-2i / rope_dims).
void rope(float* x, int32_t rope_dims, int64_t pos, float theta, bool neox);

// y = silu(gate) * up / gelu_tanh(gate) * up.
void silu_mul(float* y, const float* gate, const float* up, int64_t n);
void gelu_tanh_mul(float* y, const float* gate, const float* up, int64_t n);

void softmax(float* x, int64_t n);  // in place, max-subtracted

// The activation format of the CUDA int8 dot path (cuda/gemv/gemv_q8.cu), mirrored bit for bit:
// blocks of 32, d = max|x| / 127, q = round-half-even(x * (1 / d)) (q = 0 where d = 0).
// n a multiple of 32; q[n], d[n / 32].
void quantize_act_q8(const float* x, int64_t n, int8_t* q, float* d);

// One row of a ggml tensor dequantized to f32 (row = index over ne[1..3] flattened).
void dequant_row(const loaders::TensorInfo& t, int64_t row, float* out);

// y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens, over every row r of W (any ggml type with a
// reference dequant). x is [n_tokens][cols], y is [n_tokens][rows]. Rows split across threads;
// each row is dequantized once and applied to all tokens.
void matmul(ThreadPool& pool, const loaders::TensorInfo& w, const float* x, int64_t n_tokens,
            float* y);

// Causal GQA attention of one query head against positions [first, last] of a KV history.
// q: [head_dim]; keys/values: callbacks are avoided, rows are given as f32 arrays
// k_rows[p * k_stride], v_rows[p * v_stride] for p in [first, last]; out: [head_dim].
void attend_head(float* out, const float* q, const float* k_rows, int64_t k_stride,
                 const float* v_rows, int64_t v_stride, int64_t first, int64_t last,
                 int32_t head_dim, float scale, float* scratch);

}  // namespace bw24::ref
