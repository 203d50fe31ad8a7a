// bw24-kernel-check (tools/kernel_check/main.cpp): the helpers every check family uses and the
// families' entry points, one .cpp per kernel family.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda/attention/flash.cuh"
#include "cuda/common/q6k_tiles.cuh"
#include "cuda/common/device.h"
#include "cuda/deltanet/gdn.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/moe/moe.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/ops/embed.cuh"
#include "cuda/ops/ops.cuh"
#include "cuda/sampling/sampling.cuh"
#include "lib/core/dtype.h"
#include "lib/core/thread_pool.h"
#include "lib/quant/repack.h"
#include "lib/quant/traits.h"
#include "lib/ref/delta_rule.h"
#include "lib/ref/ops.h"
#include "lib/sampling/sampler.h"

namespace bw24::kcheck {

struct Result {
  int run = 0, failed = 0;
};

template <typename T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(size_t n) {
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) p = nullptr;
  }
  ~DeviceBuffer() { cudaFree(p); }
};

inline bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("  CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// Normalized error ||a - b|| / ||b||; NaN never passes.
inline double nerr(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (a[i] - b[i]) * double(a[i] - b[i]);
    den += b[i] * double(b[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

inline std::string fmt_name(const char* kernel, GgmlType t, const char* tag) {
  std::string s = std::string(kernel) + " " + std::string(type_info(static_cast<uint32_t>(t))->name);
  return *tag ? s + " " + tag : s;
}

inline std::string shape(int64_t rows, int64_t cols, int nt) {
  return std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(nt) + " tok";
}

// "r0 + r1 + ... x cols": the rows of a multi-segment launch's n segments over one width.
inline std::string segments_shape(const int64_t* rows, int n, int64_t cols) {
  std::string s = std::to_string(rows[0]);
  for (int i = 1; i < n; ++i) s += " + " + std::to_string(rows[i]);
  return s + " x " + std::to_string(cols);
}

template <typename T>
inline void upload(DeviceBuffer<T>& d, const std::vector<T>& h) {
  cudaMemcpy(d.p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
}

template <typename T>
inline std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}
template <typename T>
inline std::vector<T> download(const DeviceBuffer<T>& d, size_t n) {
  return download(static_cast<const T*>(d.p), n);
}

// Whether two host copies hold the same bytes (float NaNs and signed zeros included, float2 too).
template <typename T>
inline bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

inline void report(Result& r, bool good, bool show, const std::string& kernel, const std::string& shape, double err) {
  ++r.run;
  r.failed += !good;
  if (!good || show) std::printf("| %s | %s | %.2e | %s |\n", kernel.c_str(), shape.c_str(), err, good ? "ok" : "FAIL");
}

// Random weights quantized to t, as a TensorInfo over `bytes` (file layout).
inline loaders::TensorInfo random_weights(std::mt19937& rng, GgmlType t, int64_t rows, int64_t cols, std::vector<uint8_t>& bytes) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const quant::QuantTraits* q = quant::traits(t);
  std::vector<float> wf(size_t(rows * cols));
  for (auto& v : wf) v = nd(rng) * 0.05f;
  const uint64_t rb = quant::row_bytes(*q->info, cols);
  bytes.assign(rb * rows, 0);
  for (int64_t i = 0; i < rows; ++i) q->quantize(&wf[size_t(i * cols)], &bytes[size_t(i * rb)], cols);
  loaders::TensorInfo ti;
  ti.type = static_cast<uint32_t>(t);
  ti.n_dims = 2;
  ti.ne = {cols, rows, 1, 1};
  ti.data = bytes.data();
  ti.n_bytes = bytes.size();
  return ti;
}

// The device copy of a weight in its kernel-native layout (as DeviceWeights::upload makes it).
inline std::vector<uint8_t> native_bytes(const loaders::TensorInfo& ti) {
  std::vector<uint8_t> dev(ti.data, ti.data + ti.n_bytes);
  if (const quant::PlaneLayout* l = quant::plane_layout(ti.type)) {
    const auto n = static_cast<int64_t>(ti.n_bytes / l->block_bytes);
    quant::to_planes(*l, ti.data, n, dev.data(), cuda::device_plane_tile(ti.type, ti.ne[0], n));
  }
  return dev;
}

inline void upload_weights(DeviceBuffer<uint8_t>& d, const loaders::TensorInfo& ti) { upload(d, native_bytes(ti)); }

// Activations on the int8 path as rmsnorm_q8 lays them out (ref::quantize_act_q8): int8 codes,
// per block of 32 (d, d * sum q), and the values they stand for.
struct ActInt8 {
  std::vector<int8_t> q;
  std::vector<float2> ds;
  std::vector<float> values;
};

inline ActInt8 quantize_act(const std::vector<float>& x) {
  ActInt8 a{std::vector<int8_t>(x.size()), std::vector<float2>(x.size() / 32), std::vector<float>(x.size())};
  std::vector<float> d(x.size() / 32);
  ref::quantize_act_q8(x.data(), int64_t(x.size()), a.q.data(), d.data());
  for (size_t b = 0; b < d.size(); ++b) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) {
      sum += a.q[32 * b + i];
      a.values[32 * b + i] = d[b] * a.q[32 * b + i];
    }
    a.ds[b] = make_float2(d[b], d[b] * static_cast<float>(sum));
  }
  return a;
}

// bf16 bits of v (round to nearest even), and back.
inline float round_bf16(float v) { return bf16_to_f32(f32_to_bf16(v)); }

inline std::vector<uint16_t> to_bf16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = f32_to_bf16(v[i]);
  return out;
}

// The check families (one per kernel family; main.cpp runs them by name).
void check_rmsnorm(std::mt19937& rng, Result& r);
void check_gemv_float(std::mt19937& rng, ThreadPool& pool, Result& r);
void check_gemv_float_multi(std::mt19937& rng, ThreadPool& pool, Result& r);
void check_gemv_q8(std::mt19937& rng, ThreadPool& pool, Result& r);
void check_gemv_q8_multi(std::mt19937& rng, Result& r);
void check_gemv_q8_streamed(std::mt19937& rng, Result& r);
void check_gemv_q8_chain(std::mt19937& rng, Result& r);
void check_gemv_q8_room(std::mt19937& rng, Result& r);
void check_gemv_q8_gate_up_q8(std::mt19937& rng, Result& r);
void check_gemv_q8_norm_fold(std::mt19937& rng, Result& r);
void check_rmsnorm_q8(std::mt19937& rng, Result& r);
void check_qk_rope(std::mt19937& rng, Result& r);
void check_attention(std::mt19937& rng, Result& r);
void check_flash_decode_rope(std::mt19937& rng, Result& r);
void check_flash_decode_bound(std::mt19937& rng, Result& r);
void check_dequant_slices(std::mt19937& rng, GgmlType t, Result& r);
void check_dequant(std::mt19937& rng, Result& r);
void check_gemm(std::mt19937& rng, ThreadPool& pool, Result& r);
void check_gemm_multi(std::mt19937& rng, Result& r);
void check_gemm_grouped(std::mt19937& rng, ThreadPool& pool, Result& r);
void check_gemm_fused(std::mt19937& rng, Result& r);
void check_gemm_grouped_q8(std::mt19937& rng, Result& r);
void check_argmax(std::mt19937& rng, Result& r);
void check_embed(std::mt19937& rng, Result& r);
void check_flash_prefill(std::mt19937& rng, Result& r);
void check_gate_ops(std::mt19937& rng, Result& r);
void check_gated_act(std::mt19937& rng, Result& r);
void check_gdn(std::mt19937& rng, Result& r);
void check_sample(std::mt19937& rng, Result& r);
void check_moe(std::mt19937& rng, Result& r);

}  // namespace bw24::kcheck
