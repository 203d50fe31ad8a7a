#include "lib/ref/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lib/quant/traits.h"

namespace bw24::ref {

void rmsnorm(float* y, const float* x, const float* w, int64_t n, float eps, bool one_plus) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) {
    float g = w ? (one_plus ? 1.0f + w[i] : w[i]) : 1.0f;
    y[i] = x[i] * inv * g;
  }
}

void rope(float* x, int32_t rope_dims, int64_t pos, float theta, bool neox) {
  const int32_t half = rope_dims / 2;
  for (int32_t i = 0; i < half; ++i) {
    // Angles in double: pos * theta^(-2i/d) loses precision in fp32 at long positions.
    double freq = std::pow(static_cast<double>(theta), -2.0 * i / rope_dims);
    double angle = static_cast<double>(pos) * freq;
    float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
    int32_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    float x0 = x[a], x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x1 * c + x0 * s;
  }
}

void silu_mul(float* y, const float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu_tanh_mul(float* y, const float* gate, const float* up, int64_t n) {
  constexpr float kC = 0.7978845608028654f;  // sqrt(2/pi)
  for (int64_t i = 0; i < n; ++i) {
    float g = gate[i];
    y[i] = 0.5f * g * (1.0f + std::tanh(kC * (g + 0.044715f * g * g * g))) * up[i];
  }
}

void softmax(float* x, int64_t n) {
  float mx = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void quantize_act_q8(const float* x, int64_t n, int8_t* q, float* d) {
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[32 * b + i]));
    const float db = amax / 127.0f, id = db > 0 ? 1.0f / db : 0.0f;
    d[b] = db;
    for (int i = 0; i < 32; ++i) q[32 * b + i] = static_cast<int8_t>(std::nearbyint(x[32 * b + i] * id));
  }
}

void dequant_row(const loaders::TensorInfo& t, int64_t row, float* out) {
  const quant::QuantTraits* q = quant::traits(t.type);
  uint64_t rb = quant::row_bytes(*q->info, t.ne[0]);
  q->dequant(t.data + static_cast<uint64_t>(row) * rb, out, t.ne[0]);
}

namespace {
// Dot product with 8 independent partial sums (vectorizable without -ffast-math).
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

void matmul(ThreadPool& pool, const loaders::TensorInfo& w, const float* x, int64_t n_tokens,
            float* y) {
  const int64_t cols = w.ne[0], rows = w.ne[1] * w.ne[2] * w.ne[3];
  // F32 rows are used in place when aligned; anything else goes through the row dequant.
  const bool is_f32 = w.type == 0 && reinterpret_cast<uintptr_t>(w.data) % alignof(float) == 0;
  pool.parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(is_f32 ? 0 : cols);
    for (int64_t r = r0; r < r1; ++r) {
      const float* wr;
      if (is_f32) {
        wr = reinterpret_cast<const float*>(w.data) + r * cols;
      } else {
        dequant_row(w, r, buf.data());
        wr = buf.data();
      }
      for (int64_t t = 0; t < n_tokens; ++t) y[t * rows + r] = dot(wr, x + t * cols, cols);
    }
  });
}

void attend_head(float* out, const float* q, const float* k_rows, int64_t k_stride,
                 const float* v_rows, int64_t v_stride, int64_t first, int64_t last,
                 int32_t head_dim, float scale, float* scratch) {
  const int64_t n = last - first + 1;
  for (int64_t p = 0; p < n; ++p)
    scratch[p] = dot(q, k_rows + (first + p) * k_stride, head_dim) * scale;
  softmax(scratch, n);
  for (int32_t d = 0; d < head_dim; ++d) out[d] = 0;
  for (int64_t p = 0; p < n; ++p) {
    const float* v = v_rows + (first + p) * v_stride;
    for (int32_t d = 0; d < head_dim; ++d) out[d] += scratch[p] * v[d];
  }
}

}  // namespace bw24::ref
