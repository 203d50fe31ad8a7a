// bw24-kernel-check: every CUDA kernel against the CPU reference (lib/ref) on fresh random inputs
// over swept shapes (tile-boundary sizes and real model widths), output buffers poisoned with NaN
// before each run. GEMV error = max |y - ref| / sum |w x| (the fp32 rounding scale); other kernels
// and the gate-up epilogue report the normalized error ||y - ref|| / ||ref||. Quantized kernels are
// compared with the reference matmul over the same quantized bytes and, on the int8 path, the same
// quantized activations (ref::quantize_act_q8). Prints a table; exit 0 all green, 1 any failure,
// 77 no CUDA device (skipped).
//
//   bw24-kernel-check [NAME]    NAME: run only the check families whose name contains it (gemm, ...)
#include <cuda_runtime.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda/attention/flash.cuh"
#include "cuda/common/device.h"
#include "cuda/deltanet/gdn.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/moe/moe.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/ops/ops.cuh"
#include "cuda/sampling/sampling.cuh"
#include "lib/core/dtype.h"
#include "lib/core/thread_pool.h"
#include "lib/quant/repack.h"
#include "lib/quant/traits.h"
#include "lib/ref/delta_rule.h"
#include "lib/ref/ops.h"
#include "lib/sampling/sampler.h"

namespace {

using namespace bw24;

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

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("  CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// Normalized error ||a - b|| / ||b||; NaN never passes.
double nerr(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (a[i] - b[i]) * double(a[i] - b[i]);
    den += b[i] * double(b[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

std::string fmt_name(const char* kernel, GgmlType t, const char* tag) {
  std::string s = std::string(kernel) + " " + std::string(type_info(static_cast<uint32_t>(t))->name);
  return *tag ? s + " " + tag : s;
}
std::string shape(int64_t rows, int64_t cols, int nt) {
  return std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(nt) + " tok";
}

void check_rmsnorm(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int n : {1, 7, 32, 127, 128, 129, 1024, 4096, 5120}) {
    for (int rows : {1, 3}) {
      for (bool one_plus : {false, true}) {
        std::vector<float> x(size_t(rows) * n), w(n), y(x.size()), ref(x.size());
        for (auto& v : x) v = nd(rng) * 3;
        for (auto& v : w) v = nd(rng);
        for (int i = 0; i < rows; ++i) ref::rmsnorm(&ref[size_t(i) * n], &x[size_t(i) * n], w.data(), n, 1e-6f, one_plus);
        DeviceBuffer<float> dx(x.size()), dw(w.size()), dy(y.size());
        cudaMemcpy(dx.p, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(dw.p, w.data(), w.size() * 4, cudaMemcpyHostToDevice);
        cudaMemset(dy.p, 0xff, y.size() * 4);  // NaN poison
        bool good = ok(cuda::rmsnorm(dy.p, dx.p, dw.p, rows, n, 1e-6f, one_plus, nullptr), "rmsnorm");
        cudaMemcpy(y.data(), dy.p, y.size() * 4, cudaMemcpyDeviceToHost);
        double worst = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          double e = std::fabs(y[i] - ref[i]), tol = 1e-6 + 1e-5 * std::fabs(ref[i]);
          if (!(e <= tol)) good = false;
          worst = std::max(worst, std::isfinite(e) ? e : INFINITY);
        }
        ++r.run;
        r.failed += !good;
        if (!good || n >= 4096)
          std::printf("| rmsnorm | rows %d n %d %s | max abs err %.2e | %s |\n", rows, n, one_plus ? "(1+w)" : "w",
                      worst, good ? "ok" : "FAIL");
      }
    }
  }
}

// sum_c |W[r][c] x[t][c]| (+ |y0|) per output: the scale of fp32 rounding error in a dot
// product. Errors are measured against it (max |y - ref| / scale), not against |ref|, which can
// be ~0 for a single output by chance.
std::vector<float> abs_dot(const loaders::TensorInfo& w, const std::vector<float>& x, int nt,
                           const std::vector<float>* y0) {
  const int64_t rows = w.ne[1], cols = w.ne[0];
  std::vector<float> out(size_t(nt * rows)), row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    ref::dequant_row(w, r, row.data());
    for (int t = 0; t < nt; ++t) {
      double s = y0 ? std::fabs((*y0)[size_t(t * rows + r)]) : 0.0;
      for (int64_t c = 0; c < cols; ++c) s += std::fabs(double(row[size_t(c)]) * x[size_t(t * cols + c)]);
      out[size_t(t * rows + r)] = static_cast<float>(s);
    }
  }
  return out;
}
double bound_err(const std::vector<float>& y, const std::vector<float>& ref, const std::vector<float>& scale) {
  double worst = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return INFINITY;
    worst = std::max(worst, std::fabs(double(y[i]) - ref[i]) / std::max(double(scale[i]), 1e-30));
  }
  return worst;
}

template <typename T>
void upload(DeviceBuffer<T>& d, const std::vector<T>& h) {
  cudaMemcpy(d.p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
}
template <typename T>
std::vector<T> download(const DeviceBuffer<T>& d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d.p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

void report(Result& r, bool good, bool show, const std::string& kernel, const std::string& shape, double err) {
  ++r.run;
  r.failed += !good;
  if (!good || show) std::printf("| %s | %s | %.2e | %s |\n", kernel.c_str(), shape.c_str(), err, good ? "ok" : "FAIL");
}

// Random weights quantized to t, as a TensorInfo over `bytes` (file layout).
loaders::TensorInfo random_weights(std::mt19937& rng, GgmlType t, int64_t rows, int64_t cols, std::vector<uint8_t>& bytes) {
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
std::vector<uint8_t> native_bytes(const loaders::TensorInfo& ti) {
  std::vector<uint8_t> dev(ti.data, ti.data + ti.n_bytes);
  if (const quant::PlaneLayout* l = quant::plane_layout(ti.type))
    quant::to_planes(*l, ti.data, static_cast<int64_t>(ti.n_bytes / l->block_bytes), dev.data());
  return dev;
}
void upload_weights(DeviceBuffer<uint8_t>& d, const loaders::TensorInfo& ti) { upload(d, native_bytes(ti)); }

// Activations on the int8 path as rmsnorm_q8 lays them out (ref::quantize_act_q8): int8 codes,
// per block of 32 (d, d * sum q), and the values they stand for.
struct ActInt8 {
  std::vector<int8_t> q;
  std::vector<float2> ds;
  std::vector<float> values;
};
ActInt8 quantize_act(const std::vector<float>& x) {
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

void check_gemv_float(std::mt19937& rng, ThreadPool& pool, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    for (int64_t cols : {256, 512, 4096}) {
      for (int64_t rows : {1, 7, 33, 128, 4096}) {
        for (int nt : {1, 2, 8}) {
          for (bool add : {false, true}) {
            if (add && rows != 33) continue;
            std::vector<uint8_t> wq;
            loaders::TensorInfo ti = random_weights(rng, t, rows, cols, wq);
            std::vector<float> x(size_t(nt * cols)), y0(size_t(nt * rows));
            for (auto& v : x) v = nd(rng);
            for (auto& v : y0) v = nd(rng);
            std::vector<float> ref(y0.size());
            ref::matmul(pool, ti, x.data(), nt, ref.data());
            if (add)
              for (size_t i = 0; i < ref.size(); ++i) ref[i] += y0[i];
            DeviceBuffer<uint8_t> dw(wq.size());
            DeviceBuffer<float> dx(x.size()), dy(y0.size());
            upload_weights(dw, ti);
            upload(dx, x);
            if (add)
              upload(dy, y0);
            else
              cudaMemset(dy.p, 0xff, y0.size() * 4);  // NaN poison
            bool good = ok(cuda::gemv(dw.p, ti.type, rows, cols, dx.p, nt, dy.p,
                                      add ? cuda::GemvOut::kAdd : cuda::GemvOut::kStore, nullptr),
                           "gemv") &&
                        ok(cudaDeviceSynchronize(), "gemv sync");
            const double e = bound_err(download(dy, y0.size()), ref, abs_dot(ti, x, nt, add ? &y0 : nullptr));
            good = good && e < 1e-5;  // fp32 accumulation on both sides (gates.md)
            report(r, good, rows == 4096 && cols == 4096, fmt_name("gemv", t, add ? "add" : ""),
                   shape(rows, cols, nt), e);
          }
        }
      }
    }
  }
}

// The formats of the int8 GEMV (cuda::gemv_q8_supports).
constexpr GgmlType kInt8PathTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};

// The int8 path: weights quantized, activations quantized by the CPU mirror of rmsnorm_q8's format,
// reference = matmul over the dequantized activations; every epilogue (store, add, gate-up).
void check_gemv_q8(std::mt19937& rng, ThreadPool& pool, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (GgmlType t : kInt8PathTypes) {
    for (int64_t cols : {256, 768, 4096, 12288}) {
      for (int64_t rows : {1, 7, 33, 128, 4096}) {
        for (int nt : {1, 2, 3, 8}) {
          for (cuda::GemvOut out : {cuda::GemvOut::kStore, cuda::GemvOut::kAdd, cuda::GemvOut::kGateUp}) {
            if (out != cuda::GemvOut::kStore && (rows != 33 || nt == 3)) continue;
            if (cols == 12288 && rows > 128) continue;  // keeps the reference matmul quick
            std::vector<uint8_t> wq, wq2;
            loaders::TensorInfo ti = random_weights(rng, t, rows, cols, wq);
            loaders::TensorInfo ti2 = random_weights(rng, t, rows, cols, wq2);
            std::vector<float> x(size_t(nt * cols)), y0(size_t(nt * rows));
            for (auto& v : x) v = nd(rng);
            for (auto& v : y0) v = nd(rng);
            const ActInt8 xa = quantize_act(x);
            const std::vector<int8_t>& xq = xa.q;
            const std::vector<float2>& xds = xa.ds;
            const std::vector<float>& xdq = xa.values;
            std::vector<float> ref(y0.size()), up(y0.size());
            ref::matmul(pool, ti, xdq.data(), nt, ref.data());
            if (out == cuda::GemvOut::kAdd)
              for (size_t i = 0; i < ref.size(); ++i) ref[i] += y0[i];
            if (out == cuda::GemvOut::kGateUp) {
              ref::matmul(pool, ti2, xdq.data(), nt, up.data());
              ref::silu_mul(ref.data(), ref.data(), up.data(), int64_t(ref.size()));
            }
            DeviceBuffer<uint8_t> dw(wq.size()), dw2(wq2.size());
            DeviceBuffer<int8_t> dq(xq.size());
            DeviceBuffer<float2> dds(xds.size());
            DeviceBuffer<float> dy(y0.size());
            upload_weights(dw, ti);
            upload_weights(dw2, ti2);
            upload(dq, xq);
            upload(dds, xds);
            if (out == cuda::GemvOut::kAdd)
              upload(dy, y0);
            else
              cudaMemset(dy.p, 0xff, y0.size() * 4);
            bool good = ok(cuda::gemv_q8(dw.p, dw2.p, ti.type, rows, cols, cuda::ActQ8{dq.p, dds.p}, nt, dy.p, out, 0,
                                         nullptr),
                           "gemv_q8") &&
                        ok(cudaDeviceSynchronize(), "gemv_q8 sync");
            const bool gate_up = out == cuda::GemvOut::kGateUp;
            const std::vector<float> y = download(dy, y0.size());
            const double e = gate_up ? nerr(y, ref) : bound_err(y, ref, abs_dot(ti, xdq, nt, out == cuda::GemvOut::kAdd ? &y0 : nullptr));
            good = good && e < 1e-5;
            const char* tag = out == cuda::GemvOut::kAdd ? "add" : out == cuda::GemvOut::kGateUp ? "gate-up" : "";
            report(r, good, rows == 4096 && cols == 4096, fmt_name("gemv_q8", t, tag), shape(rows, cols, nt), e);
          }
        }
      }
    }
  }
}

// Q, K, V in one launch: each segment's output bit-identical to its own single-matrix launch.
void check_gemv_q8_multi(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (GgmlType t : kInt8PathTypes) {
    const int64_t cols = 512, rows[3] = {64, 17, 16};
    const int nt = 2;
    std::vector<uint8_t> wq[3];
    std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
    for (int i = 0; i < 3; ++i) {
      loaders::TensorInfo ti = random_weights(rng, t, rows[i], cols, wq[i]);
      dw.push_back(std::make_unique<DeviceBuffer<uint8_t>>(wq[i].size()));
      upload_weights(*dw.back(), ti);
    }
    std::vector<int8_t> xq(size_t(nt * cols));
    std::vector<float2> xds(xq.size() / 32);
    for (auto& v : xq) v = static_cast<int8_t>(rng() % 255 - 127);
    for (auto& v : xds) v = make_float2(0.01f * (1 + rng() % 7), nd(rng));
    DeviceBuffer<int8_t> dq(xq.size());
    DeviceBuffer<float2> dds(xds.size());
    upload(dq, xq);
    upload(dds, xds);
    const cuda::ActQ8 x{dq.p, dds.p};
    bool good = true;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> single, multi;
    cuda::GemvSegment segs[3];
    for (int i = 0; i < 3; ++i) {
      single.push_back(std::make_unique<DeviceBuffer<float>>(size_t(nt * rows[i])));
      multi.push_back(std::make_unique<DeviceBuffer<float>>(size_t(nt * rows[i])));
      cudaMemset(multi.back()->p, 0xff, size_t(nt * rows[i]) * 4);
      good = good && ok(cuda::gemv_q8(dw[size_t(i)]->p, nullptr, static_cast<uint32_t>(t), rows[i], cols, x, nt,
                                      single.back()->p, cuda::GemvOut::kStore, 0, nullptr),
                        "gemv_q8");
      segs[i] = {dw[size_t(i)]->p, multi.back()->p, rows[i]};
    }
    good = good && ok(cuda::gemv_q8_multi(segs, 3, nullptr, static_cast<uint32_t>(t), cols, x, nt,
                                          cuda::GemvOut::kStore, 0, nullptr),
                      "gemv_q8_multi") &&
           ok(cudaDeviceSynchronize(), "sync");
    int differ = 0;
    for (int i = 0; i < 3; ++i) {
      const auto a = download(*single[size_t(i)], size_t(nt * rows[i])), b = download(*multi[size_t(i)], size_t(nt * rows[i]));
      for (size_t k = 0; k < a.size(); ++k) differ += !(a[k] == b[k]);
    }
    good = good && differ == 0;
    report(r, good, true, fmt_name("gemv_q8_multi", t, ""), "64 + 17 + 16 x 512, 2 tok, outputs differing " + std::to_string(differ), 0.0);
  }
}

// rmsnorm_q8 against ref::rmsnorm + ref::quantize_act_q8: the f32 output within fp32 tolerance, the
// int8 codes equal except where the reference value sits within rounding distance of a .5 step.
void check_rmsnorm_q8(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int n : {32, 576, 4096, 12288}) {
    for (int rows : {1, 5}) {
      for (bool with_norm : {true, false}) {
        std::vector<float> x(size_t(rows) * n), w(n), ref(x.size());
        for (auto& v : x) v = nd(rng) * 3;
        for (auto& v : w) v = nd(rng);
        for (int i = 0; i < rows; ++i) {
          if (with_norm)
            ref::rmsnorm(&ref[size_t(i) * n], &x[size_t(i) * n], w.data(), n, 1e-6f, false);
          else
            std::copy_n(&x[size_t(i) * n], n, &ref[size_t(i) * n]);
        }
        std::vector<int8_t> rq(x.size());
        std::vector<float> rd(x.size() / 32);
        ref::quantize_act_q8(ref.data(), int64_t(ref.size()), rq.data(), rd.data());
        DeviceBuffer<float> dx(x.size()), dw(w.size()), dy(x.size());
        DeviceBuffer<int8_t> dq(x.size());
        DeviceBuffer<float2> dds(x.size() / 32);
        upload(dx, x);
        upload(dw, w);
        cudaMemset(dy.p, 0xff, x.size() * 4);
        bool good = ok(cuda::rmsnorm_q8(dy.p, dq.p, dds.p, dx.p, with_norm ? dw.p : nullptr, rows, n, 1e-6f, false,
                                        nullptr),
                       "rmsnorm_q8") &&
                    ok(cudaDeviceSynchronize(), "rmsnorm_q8 sync");
        const std::vector<float> y = download(dy, x.size());
        const std::vector<int8_t> q = download(dq, x.size());
        const std::vector<float2> ds = download(dds, x.size() / 32);
        const double e = nerr(y, ref);
        int off = 0;
        for (size_t i = 0; i < q.size(); ++i) {
          if (q[i] == rq[i]) continue;
          const double step = ref[i] / rd[i / 32];  // |q - step| ~ 0.5 where fp order may flip a rounding
          if (std::abs(q[i] - rq[i]) > 1 || std::fabs(std::fabs(step - std::trunc(step)) - 0.5) > 1e-3) ++off;
        }
        for (size_t b = 0; b < ds.size(); ++b) {
          int sum = 0;
          for (int i = 0; i < 32; ++i) sum += q[32 * b + i];
          if (!(std::fabs(ds[b].x - rd[b]) <= 1e-5f * rd[b] + 1e-30f) ||
              !(std::fabs(ds[b].y - ds[b].x * sum) <= 1e-5f * std::fabs(ds[b].x * sum) + 1e-30f))
            ++off;
        }
        good = good && e < 1e-5 && off == 0;
        report(r, good, n == 4096 && rows == 1, with_norm ? "rmsnorm_q8" : "quantize_q8",
               "rows " + std::to_string(rows) + " n " + std::to_string(n) + ", codes off " + std::to_string(off), e);
      }
    }
  }
}

// KV cache contents as the device keeps them (cuda/ops/ops.cuh KvDtype): f32; f16 (values rounded
// on the way); q8_0 from lib/quant's q8_0 quantizer, its 34-byte blocks split into the device's
// planes (all quants, then all f16 scales). v: [n][width] values, width % 32 == 0 for q8_0.
std::vector<uint8_t> cache_bytes(const std::vector<float>& v, cuda::KvDtype kv) {
  if (kv == cuda::KvDtype::kQ8_0) {
    const size_t blocks = v.size() / 32;
    std::vector<uint8_t> file(blocks * 34), out(v.size() + blocks * 2);
    quant::traits(GgmlType::Q8_0)->quantize(v.data(), file.data(), int64_t(v.size()));
    for (size_t b = 0; b < blocks; ++b) {
      std::memcpy(&out[32 * b], &file[34 * b + 2], 32);
      std::memcpy(&out[v.size() + 2 * b], &file[34 * b], 2);
    }
    return out;
  }
  const bool f16 = kv == cuda::KvDtype::kF16;
  std::vector<uint8_t> out(v.size() * (f16 ? 2 : 4));
  for (size_t i = 0; i < v.size(); ++i) {
    if (f16) {
      const uint16_t h = f32_to_fp16(v[i]);
      std::memcpy(&out[2 * i], &h, 2);
    } else {
      std::memcpy(&out[4 * i], &v[i], 4);
    }
  }
  return out;
}
std::vector<float> cache_values(const std::vector<uint8_t>& b, cuda::KvDtype kv) {
  if (kv == cuda::KvDtype::kQ8_0) {
    const size_t n = b.size() * 16 / 17;  // n quants + n / 16 bytes of scales
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, &b[n + 2 * (i / 32)], 2);
      out[i] = fp16_to_f32(h) * static_cast<float>(static_cast<int8_t>(b[i]));
    }
    return out;
  }
  const bool f16 = kv == cuda::KvDtype::kF16;
  std::vector<float> out(b.size() / (f16 ? 2 : 4));
  for (size_t i = 0; i < out.size(); ++i) {
    if (f16) {
      uint16_t h;
      std::memcpy(&h, &b[2 * i], 2);
      out[i] = fp16_to_f32(h);
    } else {
      std::memcpy(&out[i], &b[4 * i], 4);
    }
  }
  return out;
}
// The values a cache of type kv holds for v.
std::vector<float> round_kv(const std::vector<float>& v, cuda::KvDtype kv) {
  return kv == cuda::KvDtype::kF32 ? v : cache_values(cache_bytes(v, kv), kv);
}
const char* kv_name(cuda::KvDtype kv) {
  return kv == cuda::KvDtype::kF32 ? "f32" : kv == cuda::KvDtype::kF16 ? "f16" : "q8_0";
}
constexpr cuda::KvDtype kKvTypes[] = {cuda::KvDtype::kF32, cuda::KvDtype::kF16, cuda::KvDtype::kQ8_0};

// qk_rope_store against ref::rmsnorm + ref::rope, at a position read from device memory, into an
// f32 and an f16 cache (f16: against the reference rounded to f16; a value within an ulp of a
// rounding boundary may round the other way, hence 1e-3).
void check_qk_rope(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int n_head, n_head_kv, head_dim, rope_dims;
    bool neox, norm;
  };
  for (Case c : {Case{32, 8, 128, 128, true, true}, Case{4, 1, 256, 256, true, true}, Case{8, 8, 64, 64, false, false},
                 Case{6, 2, 80, 32, false, true}}) {
    for (int nt : {1, 3}) for (cuda::KvDtype kv : kKvTypes) {
      if (kv == cuda::KvDtype::kQ8_0 && c.head_dim % 32 != 0) continue;
      const int64_t pos0 = 1000, n_ctx = pos0 + nt;
      const int D = c.head_dim, kvw = c.n_head_kv * D;
      const size_t cache_size = size_t(cuda::kv_cache_bytes(kv, n_ctx, kvw));
      std::vector<float> q(size_t(nt) * c.n_head * D), k(size_t(nt) * kvw), v(k.size()), qn(D), kn(D);
      for (auto* vec : {&q, &k, &v, &qn, &kn})
        for (auto& x : *vec) x = nd(rng);
      std::vector<float> rq = q, rk = k;
      for (int t = 0; t < nt; ++t) {
        for (int h = 0; h < c.n_head; ++h) {
          float* p = &rq[(size_t(t) * c.n_head + h) * D];
          if (c.norm) ref::rmsnorm(p, p, qn.data(), D, 1e-6f, false);
          ref::rope(p, c.rope_dims, pos0 + t, 1e6f, c.neox);
        }
        for (int h = 0; h < c.n_head_kv; ++h) {
          float* p = &rk[size_t(t) * kvw + h * D];
          if (c.norm) ref::rmsnorm(p, p, kn.data(), D, 1e-6f, false);
          ref::rope(p, c.rope_dims, pos0 + t, 1e6f, c.neox);
        }
      }
      DeviceBuffer<float> dq(q.size()), dk(k.size()), dv(v.size()), dqn(D), dkn(D);
      DeviceBuffer<uint8_t> kc(cache_size), vc(cache_size);
      DeviceBuffer<int64_t> dpos(1);
      upload(dq, q);
      upload(dk, k);
      upload(dv, v);
      upload(dqn, qn);
      upload(dkn, kn);
      upload(dpos, std::vector<int64_t>{pos0 - 7});
      cudaMemset(kc.p, 0xff, cache_size);
      cudaMemset(vc.p, 0xff, cache_size);
      cuda::QkRopeArgs a{};
      a.q = dq.p;
      a.k = dk.p;
      a.v = dv.p;
      a.k_cache = kc.p;
      a.v_cache = vc.p;
      a.kv_type = kv;
      a.n_ctx = n_ctx;
      a.q_norm = c.norm ? dqn.p : nullptr;
      a.k_norm = c.norm ? dkn.p : nullptr;
      a.eps = 1e-6f;
      a.n_head = c.n_head;
      a.n_head_kv = c.n_head_kv;
      a.head_dim = D;
      a.rope_dims = c.rope_dims;
      a.theta = 1e6f;
      a.neox = c.neox;
      a.pos = cuda::DevicePos{dpos.p, 7};
      // One token takes the frequency table the runner uploads, three compute it in place.
      std::vector<double> freq(size_t(std::max(1, c.rope_dims / 2)));
      for (int i = 0; i < c.rope_dims / 2; ++i) freq[size_t(i)] = std::pow(1e6, -2.0 * i / c.rope_dims);
      DeviceBuffer<double> dfreq(freq.size());
      upload(dfreq, freq);
      a.inv_freq = nt == 1 ? dfreq.p : nullptr;
      bool good = ok(cuda::qk_rope_store(a, nt, nullptr), "qk_rope_store") && ok(cudaDeviceSynchronize(), "sync");
      const std::vector<float> gq = download(dq, q.size()), gkc = cache_values(download(kc, cache_size), kv),
                               gvc = cache_values(download(vc, cache_size), kv);
      const std::vector<float> gk(gkc.begin() + pos0 * kvw, gkc.end()), gv(gvc.begin() + pos0 * kvw, gvc.end());
      // V goes into the cache unchanged: its f16 / q8_0 form must equal the reference's exactly.
      const bool v_exact = gv == round_kv(v, kv);
      const double e = std::max({nerr(gq, rq), nerr(gk, round_kv(rk, kv)), nerr(gv, round_kv(v, kv))});
      good = good && v_exact && e < (kv == cuda::KvDtype::kF32 ? 1e-5 : kv == cuda::KvDtype::kF16 ? 1e-3 : 5e-3);
      report(r, good, nt == 1, std::string("qk_rope_store ") + kv_name(kv),
             "heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + " D " + std::to_string(D) +
                 " rope " + std::to_string(c.rope_dims) + (c.neox ? " neox" : "") + ", " + std::to_string(nt) + " tok",
             e);
    }
  }
}

// One attention test case: random q and cache (f16: values rounded as the device stores them),
// the reference output (ref::attend_head per token and head) and the cache bytes to upload.
struct AttnCase {
  int n_head, n_head_kv, D;
  int64_t pos0;
  int nt, window;
  std::string name(cuda::KvDtype kv) const {
    return "heads " + std::to_string(n_head) + "/" + std::to_string(n_head_kv) + " D " + std::to_string(D) + " pos " +
           std::to_string(pos0) + " " + std::to_string(nt) + " tok" +
           (window ? " window " + std::to_string(window) : "") + " " + kv_name(kv);
  }
};
struct AttnData {
  std::vector<float> q, ref;
  std::vector<uint8_t> kb, vb;
  float scale;
};
AttnData attention_data(std::mt19937& rng, const AttnCase& c, int n_ctx, cuda::KvDtype kv) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int kvw = c.n_head_kv * c.D;
  std::vector<float> q(size_t(c.nt) * c.n_head * c.D), kc(size_t(n_ctx) * kvw), vc(kc.size());
  for (auto* vec : {&q, &kc, &vc})
    for (auto& x : *vec) x = nd(rng);
  kc = round_kv(kc, kv);  // the reference reads what the cache holds
  vc = round_kv(vc, kv);
  AttnData d{q, std::vector<float>(q.size()), cache_bytes(kc, kv), cache_bytes(vc, kv),
             1.0f / std::sqrt(static_cast<float>(c.D))};
  std::vector<float> scratch(static_cast<size_t>(n_ctx));
  for (int t = 0; t < c.nt; ++t)
    for (int h = 0; h < c.n_head; ++h) {
      const int64_t p = c.pos0 + t, first = c.window > 0 ? std::max<int64_t>(0, p - c.window + 1) : 0;
      const int g = h / (c.n_head / c.n_head_kv);
      ref::attend_head(&d.ref[(size_t(t) * c.n_head + h) * c.D], &q[(size_t(t) * c.n_head + h) * c.D], &kc[g * c.D], kvw,
                       &vc[g * c.D], kvw, first, p, c.D, d.scale, scratch.data());
    }
  return d;
}

// Decode attention against ref::attend_head, GQA, causal, windowed, f32 and f16 caches (the
// reference reads the same f16-rounded values): version 1 (any head size) and split-K flash decode
// (64/128/256, across split boundaries).
void check_attention(std::mt19937& rng, Result& r) {
  for (AttnCase c : {AttnCase{32, 8, 128, 0, 1, 0}, AttnCase{32, 8, 128, 700, 1, 0}, AttnCase{32, 8, 128, 300, 8, 0},
                     AttnCase{4, 1, 256, 1000, 3, 512}, AttnCase{6, 2, 80, 37, 2, 0}, AttnCase{16, 2, 64, 4095, 2, 0},
                     AttnCase{64, 8, 128, 1536, 1, 300}}) {
    for (cuda::KvDtype kv : kKvTypes) {
      if (kv == cuda::KvDtype::kQ8_0 && c.D % 32 != 0) continue;
      const int n_ctx = static_cast<int>(c.pos0) + c.nt + 100;  // slack: splits past the end
      const AttnData d = attention_data(rng, c, n_ctx, kv);
      DeviceBuffer<float> dq(d.q.size()), dout(d.q.size()), dscores(size_t(c.nt) * c.n_head * n_ctx),
          dflash(size_t(cuda::flash_decode_scratch(n_ctx, c.nt, c.n_head, c.D)));
      DeviceBuffer<uint8_t> dk(d.kb.size()), dv(d.vb.size());
      upload(dq, d.q);
      upload(dk, d.kb);
      upload(dv, d.vb);
      for (bool flash : {false, true}) {
        if (flash && !cuda::flash_decode_supports(c.D, c.n_head, c.n_head_kv)) continue;
        cudaMemset(dout.p, 0xff, d.q.size() * 4);
        const cuda::DevicePos pos{nullptr, c.pos0};
        const cudaError_t e0 =
            flash ? cuda::flash_decode(dout.p, dq.p, dk.p, dv.p, kv, dflash.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                       c.window, d.scale, n_ctx, nullptr)
                  : cuda::attention(dout.p, dq.p, dk.p, dv.p, kv, dscores.p, c.nt, c.n_head, c.n_head_kv, c.D, pos,
                                    c.window, d.scale, n_ctx, nullptr);
        bool good = ok(e0, "attention") && ok(cudaDeviceSynchronize(), "attention sync");
        const double e = nerr(download(dout, d.q.size()), d.ref);
        good = good && e < 1e-5;
        report(r, good, true, flash ? "flash_decode" : "attention", c.name(kv), e);
      }
    }
  }
}

// bf16 bits of v (round to nearest even), and back.
float round_bf16(float v) { return bf16_to_f32(f32_to_bf16(v)); }
std::vector<uint16_t> to_bf16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = f32_to_bf16(v[i]);
  return out;
}

// A stack of 3 experts (each repacked on its own, as DeviceWeights::upload does) through one
// dequant_bf16_slices launch: bit-identical to dequant_bf16 of each expert alone.
void check_dequant_slices(std::mt19937& rng, GgmlType t, Result& r) {
  const int64_t rows = 6, cols = 512;
  const int slices = 3;
  std::vector<uint8_t> stack;
  for (int i = 0; i < slices; ++i) {
    std::vector<uint8_t> file;
    const std::vector<uint8_t> one = native_bytes(random_weights(rng, t, rows, cols, file));
    stack.insert(stack.end(), one.begin(), one.end());
  }
  const int64_t slice = static_cast<int64_t>(stack.size()) / slices, n = rows * cols;
  DeviceBuffer<uint8_t> dw(stack.size());
  DeviceBuffer<uint16_t> dall(size_t(slices * n)), done(size_t(slices * n));
  upload(dw, stack);
  const uint32_t type = static_cast<uint32_t>(t);
  bool good = ok(cuda::dequant_bf16_slices(dw.p, type, rows, cols, slice, slices,
                                           reinterpret_cast<cuda::bf16*>(dall.p), nullptr),
                 "dequant_bf16_slices");
  for (int i = 0; i < slices; ++i)
    good = good && ok(cuda::dequant_bf16(dw.p + i * slice, type, rows, cols, 0, rows,
                                         reinterpret_cast<cuda::bf16*>(done.p) + i * n, nullptr),
                      "dequant_bf16");
  good = good && ok(cudaDeviceSynchronize(), "dequant sync");
  const bool same = download(dall, size_t(slices * n)) == download(done, size_t(slices * n));
  report(r, good && same, false, fmt_name("dequant_bf16_slices", t, ""), "3 experts x " + shape(rows, cols, 0),
         same ? 0.0 : 1.0);
}

// The weight expansion of the prefill GEMM: a slice of rows against lib/ref's dequantization,
// rounded to bf16 (error relative to |ref|, at most bf16's half ulp plus the f32 rounding of the
// scale products).
void check_dequant(std::mt19937& rng, Result& r) {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                     GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS}) {
    check_dequant_slices(rng, t, r);
    for (int64_t cols : {256, 4096}) {
      const int64_t rows = 7, row0 = 2, n_rows = 5;
      std::vector<uint8_t> wq;
      loaders::TensorInfo ti = random_weights(rng, t, rows, cols, wq);
      DeviceBuffer<uint8_t> dw(wq.size());
      DeviceBuffer<uint16_t> dout(size_t(n_rows * cols));
      upload_weights(dw, ti);
      cudaMemset(dout.p, 0xff, size_t(n_rows * cols) * 2);
      bool good = ok(cuda::dequant_bf16(dw.p, ti.type, rows, cols, row0, n_rows,
                                        reinterpret_cast<cuda::bf16*>(dout.p), nullptr),
                     "dequant_bf16") &&
                  ok(cudaDeviceSynchronize(), "dequant sync");
      const std::vector<uint16_t> y = download(dout, size_t(n_rows * cols));
      std::vector<float> row(static_cast<size_t>(cols));
      double worst = 0;
      for (int64_t i = 0; i < n_rows; ++i) {
        ref::dequant_row(ti, row0 + i, row.data());
        for (int64_t c = 0; c < cols; ++c) {
          const double ref = row[size_t(c)], v = bf16_to_f32(y[size_t(i * cols + c)]);
          const double e = std::fabs(v - ref) / std::max(std::fabs(ref), 1e-6);
          worst = std::max(worst, std::isfinite(v) ? e : INFINITY);
        }
      }
      good = good && worst <= 4e-3;
      report(r, good, cols == 4096, fmt_name("dequant_bf16", t, ""), shape(n_rows, cols, 0), worst);
    }
  }
}

// The prefill GEMM over bf16 operands against an f64 matmul of the same bf16 values; error =
// max |y - ref| / sum |a w| (fp32 accumulation scale). Both tile heights (64 and 128 tokens),
// tails in M and N, the add epilogue and a strided output (ldc > n).
void check_gemm(std::mt19937& rng, ThreadPool& pool, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int64_t m, n, k, ldc;
    bool add;
  };
  for (Case c : {Case{1, 2, 32, 2, false}, Case{9, 130, 64, 130, false}, Case{64, 128, 256, 128, true},
                 Case{100, 256, 4096, 260, false}, Case{127, 1026, 512, 1026, true}, Case{200, 512, 768, 512, false},
                 Case{1024, 4608, 256, 4608, false}, Case{1000, 4610, 512, 4610, true}}) {
    std::vector<float> a(size_t(c.m * c.k)), w(size_t(c.n * c.k)), y0(size_t(c.m * c.ldc));
    for (auto& v : a) v = round_bf16(nd(rng));
    for (auto& v : w) v = round_bf16(nd(rng) * 0.05f);
    for (auto& v : y0) v = nd(rng);
    std::vector<float> ref(y0.size()), scale(y0.size());
    pool.parallel_for(c.m, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          double s = 0, sa = 0;
          for (int64_t kk = 0; kk < c.k; ++kk) {
            const double p = double(a[size_t(i * c.k + kk)]) * w[size_t(j * c.k + kk)];
            s += p;
            sa += std::fabs(p);
          }
          const size_t o = size_t(i * c.ldc + j);
          ref[o] = static_cast<float>(s + (c.add ? y0[o] : 0.0));
          scale[o] = static_cast<float>(sa + (c.add ? std::fabs(y0[o]) : 0.0));
        }
    });
    DeviceBuffer<uint16_t> da(a.size()), dw(w.size());
    DeviceBuffer<float> dy(y0.size());
    upload(da, to_bf16_bits(a));
    upload(dw, to_bf16_bits(w));
    // The table's pick (-1), then every configuration of the table on the larger shapes.
    for (int config = -1; config < (c.m >= 100 ? cuda::gemm_bf16_config_count() : 0); ++config) {
      upload(dy, y0);  // columns past n keep y0 (checked below); with add the inputs
      if (!c.add)
        for (int64_t i = 0; i < c.m; ++i) cudaMemset(dy.p + i * c.ldc, 0xff, size_t(c.n) * 4);  // NaN poison
      bool good = ok(cuda::gemm_bf16(reinterpret_cast<const cuda::bf16*>(da.p), reinterpret_cast<const cuda::bf16*>(dw.p),
                                     dy.p, c.m, c.n, c.k, c.ldc, c.add ? cuda::GemvOut::kAdd : cuda::GemvOut::kStore,
                                     nullptr, config),
                     "gemm_bf16") &&
                  ok(cudaDeviceSynchronize(), "gemm sync");
      const std::vector<float> y = download(dy, y0.size());
      double worst = 0;
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.ldc; ++j) {
          const size_t o = size_t(i * c.ldc + j);
          if (j >= c.n) {  // outside the product: untouched
            if (y[o] != y0[o]) worst = INFINITY;
            continue;
          }
          if (!std::isfinite(y[o])) worst = INFINITY;
          else worst = std::max(worst, std::fabs(double(y[o]) - ref[o]) / std::max(double(scale[o]), 1e-30));
        }
      good = good && worst < 1e-5;
      report(r, good, true, c.add ? "gemm_bf16 add" : "gemm_bf16",
             std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
                 (c.ldc != c.n ? " ldc " + std::to_string(c.ldc) : "") +
                 (config < 0 ? "" : std::string(", ") + cuda::gemm_bf16_config_name(config)),
             worst);
    }
  }
}

// Three matrices in one launch: each segment's output bit-identical to its own launch (the k order
// of every output is the same in both).
void check_gemm_multi(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t m = 300, k = 256, ns[3] = {512, 130, 128};
  std::vector<float> a(size_t(m * k));
  for (auto& v : a) v = nd(rng);
  DeviceBuffer<uint16_t> da(a.size());
  upload(da, to_bf16_bits(a));
  const cuda::bf16* pa = reinterpret_cast<const cuda::bf16*>(da.p);
  std::vector<std::unique_ptr<DeviceBuffer<uint16_t>>> dw;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> dy, dy1;
  cuda::GemmSegment segs[3];
  for (int i = 0; i < 3; ++i) {
    std::vector<float> w(size_t(ns[i] * k));
    for (auto& v : w) v = nd(rng) * 0.05f;
    dw.push_back(std::make_unique<DeviceBuffer<uint16_t>>(w.size()));
    upload(*dw[i], to_bf16_bits(w));
    dy.push_back(std::make_unique<DeviceBuffer<float>>(size_t(m * ns[i])));
    dy1.push_back(std::make_unique<DeviceBuffer<float>>(size_t(m * ns[i])));
    cudaMemset(dy[i]->p, 0xff, size_t(m * ns[i]) * 4);
    segs[i] = {reinterpret_cast<const cuda::bf16*>(dw[i]->p), dy[i]->p, ns[i], ns[i]};
  }
  bool good = ok(cuda::gemm_bf16_multi(pa, segs, 3, m, k, cuda::GemvOut::kStore, nullptr), "gemm_bf16_multi");
  for (int i = 0; i < 3; ++i)
    good = good && ok(cuda::gemm_bf16(pa, static_cast<const cuda::bf16*>(segs[i].w), dy1[i]->p, m, ns[i], k, ns[i],
                                      cuda::GemvOut::kStore, nullptr),
                      "gemm_bf16");
  good = good && ok(cudaDeviceSynchronize(), "gemm multi sync");
  double diff = 0;
  for (int i = 0; i < 3; ++i) {
    const auto y = download(*dy[i], size_t(m * ns[i])), y1 = download(*dy1[i], size_t(m * ns[i]));
    for (size_t j = 0; j < y.size(); ++j)
      if (!(y[j] == y1[j])) diff = std::max(diff, std::isfinite(y[j]) ? std::fabs(double(y[j]) - y1[j]) : INFINITY);
  }
  report(r, good && diff == 0, true, "gemm_bf16_multi", "300 x {512, 130, 128} x 256 vs single launches", diff);
}

// MoE prefill: moe_group's tables against a CPU counting sort (pairs of one expert in increasing
// order, 64-row tiles), then the grouped GEMM in both of its uses against an f64 matmul of the
// same bf16 values (error as check_gemm): gate-up (two segments, A row = pair / k, C in sorted
// order) and down (A in sorted order, C scattered back to pair order), the experts split over two
// launches as the runner splits them when the expansion scratch is short. Skewed ids (one expert
// over 2 tiles, one with none), one token, and an expert with exactly 64 and 65 rows.
// One case: n tokens; skew: expert 0 for ~60 % of first picks, else expert 0 for every first pick
// (n = 64 / 65: exactly one tile / one row past it).
void check_gemm_grouped_case(std::mt19937& rng, ThreadPool& pool, Result& r, int n, bool skew) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int X = 6, k = 2, pairs = n * k, split = 4;
  const int64_t K = 256, ns[2] = {130, 63};
  std::vector<int32_t> ids(static_cast<size_t>(pairs));
  for (int t = 0; t < n; ++t) {  // expert 5 never
    const int first = !skew || rng() % 10 < 6 ? 0 : 1 + static_cast<int>(rng() % 4);
    ids[size_t(t * k)] = first;
    ids[size_t(t * k + 1)] = (first + 1 + static_cast<int>(rng() % 3)) % 5;
  }
  // CPU tables.
  std::vector<int32_t> sorted_ref, offsets_ref(X + 1, 0), tile_start_ref(X + 1, 0);
  std::vector<std::pair<int, int>> tiles_ref;
  for (int e = 0; e < X; ++e) {
    offsets_ref[size_t(e)] = static_cast<int32_t>(sorted_ref.size());
    tile_start_ref[size_t(e)] = static_cast<int32_t>(tiles_ref.size());
    for (int p = 0; p < pairs; ++p)
      if (ids[size_t(p)] == e) sorted_ref.push_back(p);
    for (int32_t row = offsets_ref[size_t(e)]; row < static_cast<int32_t>(sorted_ref.size()); row += cuda::kGemmGroupRows)
      tiles_ref.push_back({e, row});
  }
  offsets_ref[X] = pairs;
  tile_start_ref[X] = static_cast<int32_t>(tiles_ref.size());
  DeviceBuffer<int32_t> dids(ids.size()), dsorted(ids.size()), doff(X + 1), dts(X + 1);
  DeviceBuffer<int2> dtiles(size_t(pairs / cuda::kGemmGroupRows + X));
  upload(dids, ids);
  bool good = ok(cuda::moe_group(dsorted.p, doff.p, dts.p, dtiles.p, dids.p, pairs, X, cuda::kGemmGroupRows, nullptr),
                 "moe_group") &&
              ok(cudaDeviceSynchronize(), "moe_group sync");
  const std::vector<int2> tiles = download(dtiles, tiles_ref.size());
  bool same = download(dsorted, ids.size()) == sorted_ref && download(doff, size_t(X + 1)) == offsets_ref &&
              download(dts, size_t(X + 1)) == tile_start_ref;
  for (size_t i = 0; i < tiles_ref.size(); ++i)
    same = same && tiles[i].x == tiles_ref[i].first && tiles[i].y == tiles_ref[i].second;
  report(r, good && same, true, "moe_group", std::to_string(pairs) + " pairs over " + std::to_string(X) +
         " experts (" + std::to_string(tiles_ref.size()) + " tiles)", same ? 0.0 : 1.0);

  // Operands: token rows a [n][K], sorted rows a2 [pairs][K], two expert stacks [X][ns[i]][K].
  auto random_bf16 = [&](size_t count, float scale) {
    std::vector<float> v(count);
    for (auto& x : v) x = round_bf16(nd(rng) * scale);
    return v;
  };
  const std::vector<float> a = random_bf16(size_t(n * K), 1.0f), a2 = random_bf16(size_t(pairs * K), 1.0f);
  std::vector<float> w[2] = {random_bf16(size_t(X * ns[0] * K), 0.05f), random_bf16(size_t(X * ns[1] * K), 0.05f)};
  DeviceBuffer<uint16_t> da(a.size()), da2(a2.size()), dw0(w[0].size()), dw1(w[1].size());
  upload(da, to_bf16_bits(a));
  upload(da2, to_bf16_bits(a2));
  upload(dw0, to_bf16_bits(w[0]));
  upload(dw1, to_bf16_bits(w[1]));
  const cuda::bf16* pw[2] = {reinterpret_cast<const cuda::bf16*>(dw0.p), reinterpret_cast<const cuda::bf16*>(dw1.p)};
  for (bool down : {false, true}) {
    const int segs_n = down ? 1 : 2;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> dy;
    for (int i = 0; i < segs_n; ++i) {
      dy.push_back(std::make_unique<DeviceBuffer<float>>(size_t(pairs * ns[i])));
      cudaMemset(dy[size_t(i)]->p, 0xff, size_t(pairs * ns[i]) * 4);  // NaN poison: every row must be written
    }
    const cuda::bf16* pa = reinterpret_cast<const cuda::bf16*>(down ? da2.p : da.p);
    for (int e0 : {0, split}) {
      const int e1 = e0 == 0 ? split : X;
      cuda::GemmSegment segs[2];
      for (int i = 0; i < segs_n; ++i) segs[i] = {pw[i] + e0 * ns[i] * K, dy[size_t(i)]->p, ns[i], ns[i], ns[i] * K * 2};
      const cuda::GemmGroups g{dsorted.p, doff.p, dts.p, dtiles.p, e0, e1, down ? 0 : k, down};
      good = good && ok(cuda::gemm_grouped(pa, segs, segs_n, static_cast<uint32_t>(GgmlType::BF16), g, pairs, K,
                                           cuda::GemvOut::kStore, nullptr),
                        "gemm_grouped");
    }
    good = good && ok(cudaDeviceSynchronize(), "grouped sync");
    double worst = 0;
    for (int i = 0; i < segs_n; ++i) {
      const std::vector<float> y = download(*dy[size_t(i)], size_t(pairs * ns[i]));
      std::vector<double> errs(static_cast<size_t>(pairs));
      pool.parallel_for(pairs, 1, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
          const int p = sorted_ref[size_t(s)], e = ids[size_t(p)];
          const float* x = down ? &a2[size_t(s * K)] : &a[size_t((p / k) * K)];
          const int64_t out_row = down ? p : s;
          double e_max = 0;
          for (int64_t j = 0; j < ns[i]; ++j) {
            const float* wr = &w[i][size_t((e * ns[i] + j) * K)];
            double acc = 0, mag = 0;
            for (int64_t kk = 0; kk < K; ++kk) {
              acc += double(x[kk]) * wr[kk];
              mag += std::fabs(double(x[kk]) * wr[kk]);
            }
            const double v = y[size_t(out_row * ns[i] + j)];
            e_max = std::max(e_max, std::isfinite(v) ? std::fabs(v - acc) / std::max(mag, 1e-30) : INFINITY);
          }
          errs[size_t(s)] = e_max;
        }
      });
      for (double e : errs) worst = std::max(worst, e);
    }
    report(r, good && worst < 1e-5, true, down ? "gemm_grouped down" : "gemm_grouped gate-up",
           std::to_string(pairs) + " pairs x " + (down ? "130" : "{130, 63}") + " x 256, experts in 2 launches", worst);
  }
}

void check_gemm_grouped(std::mt19937& rng, ThreadPool& pool, Result& r) {
  for (auto [n, skew] : {std::pair{150, true}, std::pair{1, false}, std::pair{64, false}, std::pair{65, false}})
    check_gemm_grouped_case(rng, pool, r, n, skew);
}

// The fused expansion (Q4_K, Q6_K read in their native layout by the grouped GEMM's tile loads)
// against dequant_bf16_slices + the grouped GEMM over the expanded stack: bit-identical outputs
// (the same bf16 weights, the same k order), every expert in one launch, a tail tile in N.
void check_gemm_fused(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K}) {
    const uint32_t type = static_cast<uint32_t>(t);
    // 5 experts of 136 x 512 (Q6_K slices of 272 blocks stay 16-byte aligned), 400 pairs over
    // them (2 per token: ~80 rows, two token tiles, per expert), fused stack vs expanded stack.
    const int X = 5, k = 2, n_tok = 200, pairs = n_tok * k;
    const int64_t N = 136, K = 512;
    std::vector<int32_t> ids(static_cast<size_t>(pairs));
    for (int p = 0; p < pairs; ++p) ids[size_t(p)] = (p % 2 == 0) ? static_cast<int32_t>(rng() % X) : -1;
    for (int p = 1; p < pairs; p += 2) ids[size_t(p)] = (ids[size_t(p - 1)] + 1 + static_cast<int32_t>(rng() % (X - 1))) % X;
    std::vector<uint8_t> stack;
    for (int e = 0; e < X; ++e) {
      std::vector<uint8_t> file;
      const std::vector<uint8_t> one = native_bytes(random_weights(rng, t, N, K, file));
      stack.insert(stack.end(), one.begin(), one.end());
    }
    const int64_t slice = static_cast<int64_t>(stack.size()) / X;
    stack.resize(stack.size() + 16);
    std::vector<float> a(size_t(n_tok * K));
    for (auto& v : a) v = nd(rng);
    DeviceBuffer<uint8_t> dstack(stack.size());
    DeviceBuffer<uint16_t> dexp(size_t(X * N * K)), da(a.size());
    DeviceBuffer<int32_t> dids(ids.size()), dsorted(ids.size()), doff(X + 1), dts(X + 1);
    DeviceBuffer<int2> dtiles(size_t(pairs / cuda::kGemmGroupRows + X));
    DeviceBuffer<float> dy(size_t(pairs * N)), dy1(size_t(pairs * N));
    upload(dstack, stack);
    upload(da, to_bf16_bits(a));
    upload(dids, ids);
    cudaMemset(dy.p, 0xff, size_t(pairs * N) * 4);
    cudaMemset(dy1.p, 0, size_t(pairs * N) * 4);
    const cuda::GemmSegment fs{dstack.p, dy.p, N, N, slice}, ps{dexp.p, dy1.p, N, N, N * K * 2};
    const cuda::GemmGroups g{dsorted.p, doff.p, dts.p, dtiles.p, 0, X, k, false};
    bool good = ok(cuda::moe_group(dsorted.p, doff.p, dts.p, dtiles.p, dids.p, pairs, X, cuda::kGemmGroupRows, nullptr),
                   "moe_group") &&
                ok(cuda::dequant_bf16_slices(dstack.p, type, N, K, slice, X, reinterpret_cast<cuda::bf16*>(dexp.p), nullptr),
                   "dequant_bf16_slices") &&
                ok(cuda::gemm_grouped(reinterpret_cast<const cuda::bf16*>(da.p), &fs, 1, type, g, pairs, K,
                                      cuda::GemvOut::kStore, nullptr),
                   "gemm_grouped fused") &&
                ok(cuda::gemm_grouped(reinterpret_cast<const cuda::bf16*>(da.p), &ps, 1,
                                      static_cast<uint32_t>(GgmlType::BF16), g, pairs, K, cuda::GemvOut::kStore, nullptr),
                   "gemm_grouped bf16") &&
                ok(cudaDeviceSynchronize(), "grouped fused sync");
    const auto y = download(dy, size_t(pairs * N)), y1 = download(dy1, size_t(pairs * N));
    double diff = 0;
    for (size_t e = 0; e < y.size(); ++e)
      if (!(y[e] == y1[e])) diff = std::max(diff, std::isfinite(y[e]) ? std::fabs(double(y[e]) - y1[e]) : INFINITY);
    report(r, good && diff == 0, true, fmt_name("gemm_grouped fused", t, ""),
           std::to_string(pairs) + " pairs x 136 x 512, 5 experts, fused vs expanded stack", diff);
  }
}

// Device argmax against sampling::argmax: random rows, planted ties (the lower index wins), an
// unaligned start, a NaN first element (never replaced, as in the sequential scan).
void check_argmax(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int n : {1, 5, 1000, 151936, 262147}) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> x(size_t(n) + 1);
      for (auto& v : x) v = nd(rng);
      const int off = variant == 2 ? 1 : 0;  // unaligned
      float* row = x.data() + off;
      if (variant == 1 && n > 4) {  // ties at the top
        row[n / 3] = row[n - 1] = row[n / 2] = 100.0f;
      }
      if (variant == 3) row[0] = NAN;
      const int32_t want = sampling::argmax(row, n);
      DeviceBuffer<float> dx(x.size());
      DeviceBuffer<int32_t> dout(1);
      upload(dx, x);
      bool good = ok(cuda::argmax(dout.p, dx.p + off, n, nullptr), "argmax") && ok(cudaDeviceSynchronize(), "sync");
      const int32_t got = download(dout, 1)[0];
      good = good && got == want;
      report(r, good, n == 151936, "argmax", std::to_string(n) + (variant == 1 ? " ties" : variant == 2 ? " unaligned" : variant == 3 ? " nan first" : ""),
             got == want ? 0.0 : 1.0);
    }
  }
}

// Flash attention prefill against ref::attend_head (bf16 Q/K/V/P inside: normalized error < 1e-2).
void check_flash_prefill(std::mt19937& rng, Result& r) {
  for (AttnCase c : {AttnCase{32, 8, 128, 0, 512, 0}, AttnCase{32, 8, 128, 700, 100, 0}, AttnCase{4, 1, 64, 0, 77, 32},
                     AttnCase{16, 8, 128, 300, 65, 100}, AttnCase{8, 8, 64, 5, 9, 0}}) {
    for (cuda::KvDtype kv : kKvTypes) {
      const int n_ctx = static_cast<int>(c.pos0) + c.nt;
      const AttnData d = attention_data(rng, c, n_ctx, kv);
      DeviceBuffer<float> dq(d.q.size()), dout(d.q.size());
      DeviceBuffer<uint8_t> dk(d.kb.size()), dv(d.vb.size());
      upload(dq, d.q);
      upload(dk, d.kb);
      upload(dv, d.vb);
      cudaMemset(dout.p, 0xff, d.q.size() * 4);
      bool good = ok(cuda::flash_prefill(dout.p, dq.p, dk.p, dv.p, kv, c.nt, c.n_head, c.n_head_kv, c.D,
                                         cuda::DevicePos{nullptr, c.pos0}, c.window, d.scale, n_ctx, nullptr),
                     "flash_prefill") &&
                  ok(cudaDeviceSynchronize(), "flash sync");
      const double e = nerr(download(dout, d.q.size()), d.ref);
      good = good && e < 1e-2;
      report(r, good, true, "flash_prefill", c.name(kv), e);
    }
  }
}

// Gated attention's two elementwise kernels: the [q | gate] split is a copy (bit-exact), the
// sigmoid gate against the reference formula.
void check_gate_ops(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int n = 3, H = 16, D = 256;
  std::vector<float> qg(size_t(n) * H * 2 * D);
  for (auto& v : qg) v = nd(rng);
  std::vector<float> q(size_t(n) * H * D), gate(q.size()), x(q.size()), y(q.size());
  for (int t = 0; t < n; ++t)
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) {
        const size_t i = (size_t(t) * H + h) * D + d, src = (size_t(t) * H + h) * 2 * D + d;
        q[i] = qg[src];
        gate[i] = qg[src + D];
      }
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = nd(rng);
    y[i] = x[i] / (1.0f + std::exp(-gate[i]));
  }
  DeviceBuffer<float> dqg(qg.size()), dq(q.size()), dg(q.size()), dx(x.size());
  upload(dqg, qg);
  upload(dx, x);
  bool good = ok(cuda::split_q_gate(dq.p, dg.p, dqg.p, n, H, D, nullptr), "split_q_gate") &&
              ok(cudaDeviceSynchronize(), "split sync");
  const bool same = download(dq, q.size()) == q && download(dg, q.size()) == gate;
  report(r, good && same, true, "split_q_gate", "16 heads D 256, 3 tok", same ? 0.0 : 1.0);
  good = ok(cuda::sigmoid_mul(dx.p, dg.p, int64_t(x.size()), nullptr), "sigmoid_mul") &&
         ok(cudaDeviceSynchronize(), "sigmoid sync");
  const double e = nerr(download(dx, x.size()), y);
  report(r, good && e < 1e-6, true, "sigmoid_mul", std::to_string(x.size()) + " elements", e);
}

// The gated delta net kernels against lib/ref (causal_conv_silu_step + l2norm_qk, the gates,
// gated_delta_recurrent, gated RMSNorm): conv output, conv state, layer output and the recurrent
// state after 1 and 3 tokens (gdn_step's token-by-token kernel, one conv tile) and after 16, 17,
// 64, 65 and 200 (gdn_chunked: one partial chunk, chunk boundaries, several chunks; conv tiles in
// parallel and the state kernel),
// separate and fused (Qwen3-Next) b/a projections, grouped and tiled value heads.
void check_gdn(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int Hk, Hv, dk, dv, K;
    bool fused, tiled;
  };
  for (Case c : {Case{16, 32, 128, 128, 4, false, true}, Case{16, 32, 128, 128, 4, true, false},
                 Case{2, 4, 64, 64, 4, false, false}, Case{2, 4, 16, 16, 4, false, true}, Case{4, 4, 128, 64, 3, false, false}}) {
    for (int n : {1, 3, 16, 17, 64, 65, 200}) {
      const int64_t C = 2 * int64_t{c.Hk} * c.dk + int64_t{c.Hv} * c.dv, Vd = int64_t{c.Hv} * c.dv;
      const int r_ = c.Hv / c.Hk, ba_stride = c.fused ? 2 * c.Hv : c.Hv;
      auto rnd = [&](size_t size, float scale) {
        std::vector<float> v(size);
        for (auto& x : v) x = nd(rng) * scale;
        return v;
      };
      std::vector<float> in = rnd(size_t(n * C), 1.0f), taps = rnd(size_t(C * c.K), 0.5f),
                         cstate = rnd(size_t((c.K - 1) * C), 1.0f), z = rnd(size_t(n * Vd), 1.0f),
                         braw = rnd(size_t(n * ba_stride), 1.0f), araw = rnd(size_t(n * ba_stride), 1.0f),
                         dt = rnd(size_t(c.Hv), 0.5f), neg_a = rnd(size_t(c.Hv), 0.5f), nw = rnd(size_t(c.dv), 1.0f),
                         S = rnd(size_t(c.Hv) * c.dk * c.dv, 0.1f);  // [Hv][dk][dv]
      for (auto& x : neg_a) x = -std::exp(x);
      if (c.fused) araw = braw;  // one in_ba output read through both pointers
      const float q_scale = 1.0f / std::sqrt(static_cast<float>(c.dk)), eps = 1e-6f;
      // Reference.
      std::vector<float> y(size_t(n * C)), cs = cstate, Sr = S, out(size_t(n * Vd));
      for (int t = 0; t < n; ++t) {
        ref::causal_conv_silu_step(taps.data(), C, c.K, cs.data(), &in[size_t(t * C)], &y[size_t(t * C)]);
        ref::l2norm_qk(&y[size_t(t * C)], c.Hk, c.dk, q_scale);
      }
      std::vector<float> qh(size_t(n * c.dk)), kh(qh.size()), vh(size_t(n * c.dv)), gh(static_cast<size_t>(n)), bh(static_cast<size_t>(n)),
          oh(vh.size());
      for (int hv = 0; hv < c.Hv; ++hv) {
        const int hk = c.tiled ? hv % c.Hk : hv / r_, g = hv / r_, jr = hv % r_;
        const int bi = c.fused ? g * 2 * r_ + jr : hv, ai = c.fused ? g * 2 * r_ + r_ + jr : hv;
        for (int t = 0; t < n; ++t) {
          std::copy_n(&y[size_t(t * C + hk * c.dk)], c.dk, &qh[size_t(t * c.dk)]);
          std::copy_n(&y[size_t(t * C + int64_t{c.Hk} * c.dk + hk * c.dk)], c.dk, &kh[size_t(t * c.dk)]);
          std::copy_n(&y[size_t(t * C + 2 * int64_t{c.Hk} * c.dk + int64_t{hv} * c.dv)], c.dv, &vh[size_t(t * c.dv)]);
          bh[size_t(t)] = ref::delta_beta(braw[size_t(t * ba_stride + bi)]);
          gh[size_t(t)] = ref::delta_log_decay(araw[size_t(t * ba_stride + ai)], dt[size_t(hv)], neg_a[size_t(hv)]);
        }
        ref::gated_delta_recurrent(qh.data(), kh.data(), vh.data(), gh.data(), bh.data(), n, c.dk, c.dv,
                                   &Sr[size_t(hv) * c.dk * c.dv], oh.data());
        for (int t = 0; t < n; ++t) {
          float* o = &out[size_t(t * Vd + int64_t{hv} * c.dv)];
          std::copy_n(&oh[size_t(t * c.dv)], c.dv, o);
          ref::rmsnorm(o, o, nw.data(), c.dv, eps, false);
          for (int j = 0; j < c.dv; ++j) {
            const float zj = z[size_t(t * Vd + int64_t{hv} * c.dv + j)];
            o[j] *= zj / (1.0f + std::exp(-zj));
          }
        }
      }
      // The device keeps each head's state transposed: [Hv][dv][dk].
      auto transpose = [&](const std::vector<float>& a) {
        std::vector<float> t(a.size());
        for (int h = 0; h < c.Hv; ++h)
          for (int i = 0; i < c.dk; ++i)
            for (int j = 0; j < c.dv; ++j)
              t[(size_t(h) * c.dv + j) * c.dk + i] = a[(size_t(h) * c.dk + i) * c.dv + j];
        return t;
      };
      DeviceBuffer<float> d_in(in.size()), d_taps(taps.size()), d_cs(cstate.size()), d_y(y.size()), d_z(z.size()),
          d_b(braw.size()), d_a(araw.size()), d_dt(dt.size()), d_na(neg_a.size()), d_nw(nw.size()), d_S(S.size()),
          d_out(out.size());
      upload(d_in, in);
      upload(d_taps, taps);
      upload(d_cs, cstate);
      upload(d_z, z);
      upload(d_b, braw);
      upload(d_a, araw);
      upload(d_dt, dt);
      upload(d_na, neg_a);
      upload(d_nw, nw);
      upload(d_S, transpose(S));
      cudaMemset(d_y.p, 0xff, y.size() * 4);
      cudaMemset(d_out.p, 0xff, out.size() * 4);
      cuda::GdnStepArgs a{};
      a.out = d_out.p;
      a.state = d_S.p;
      a.y = d_y.p;
      a.z = d_z.p;
      a.beta_raw = d_b.p;
      a.alpha_raw = c.fused ? d_b.p : d_a.p;
      a.ba_stride = ba_stride;
      a.ba_fused = c.fused;
      a.dt_bias = d_dt.p;
      a.neg_a = d_na.p;
      a.norm_w = d_nw.p;
      a.eps = eps;
      a.Hk = c.Hk;
      a.Hv = c.Hv;
      a.dk = c.dk;
      a.dv = c.dv;
      a.v_heads_tiled = c.tiled;
      bool good = ok(cuda::gdn_conv(d_y.p, d_cs.p, d_in.p, d_taps.p, n, C, c.K, c.Hk, c.dk, q_scale, nullptr),
                     "gdn_conv") &&
                  ok(cuda::gdn_step(a, n, nullptr), "gdn_step") && ok(cudaDeviceSynchronize(), "gdn sync");
      const double e_y = nerr(download(d_y, y.size()), y), e_cs = nerr(download(d_cs, cs.size()), cs),
                   e_out = nerr(download(d_out, out.size()), out), e_S = nerr(download(d_S, S.size()), transpose(Sr));
      const std::string shape_s = "Hk " + std::to_string(c.Hk) + " Hv " + std::to_string(c.Hv) + " dk " +
                                  std::to_string(c.dk) + " dv " + std::to_string(c.dv) + " K " + std::to_string(c.K) +
                                  (c.fused ? " fused ba" : "") + (c.tiled ? " tiled" : "") + ", " + std::to_string(n) +
                                  " tok";
      const bool chunked = n >= cuda::kGdnChunkedFrom;  // the chunked form rounds differently from the recurrence
      report(r, good && std::max(e_y, e_cs) < 1e-5, true, "gdn_conv", shape_s, std::max(e_y, e_cs));
      report(r, good && std::max(e_out, e_S) < (chunked ? 1e-4 : 1e-5), true, chunked ? "gdn_chunked" : "gdn_step",
             shape_s, std::max(e_out, e_S));
    }
  }
}

// Device top-k sampling against sampling::Sampler over the same logits and the same uniform draw
// (a second Sampler with the same seed gives the u the first one uses): the same token in every
// trial. Rows of 151936 and 2048 (k above the row: all of it), top-k 1 / 40 / 1024, temperatures,
// top-p and min-p cuts, ties planted at the top and at the k-th value (the lower id first).
void check_sample(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 3.0f);
  struct Case {
    int n, top_k;
    float temperature, top_p, min_p;
    bool ties;
  };
  for (Case c : {Case{151936, 40, 0.8f, 0.95f, 0.05f, false}, Case{151936, 1, 1.0f, 1.0f, 0.0f, true},
                 Case{151936, 1024, 1.5f, 1.0f, 0.0f, false}, Case{151936, 1024, 0.7f, 0.9f, 0.0f, true},
                 Case{151936, 64, 2.0f, 1.0f, 0.1f, true}, Case{2048, 1024, 1.0f, 0.98f, 0.01f, false},
                 Case{1000, 1024, 1.0f, 1.0f, 0.0f, false}}) {
    constexpr int kTrials = 20;
    int mismatches = 0;
    bool good = true;
    DeviceBuffer<float> dx(size_t(c.n));
    DeviceBuffer<int32_t> dout(1);
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<float> x(static_cast<size_t>(c.n));
      for (auto& v : x) v = nd(rng);
      if (c.ties) {  // the maximum three times, and a run of equal values around the k-th
        const float top = 20.0f;
        x[size_t(c.n / 3)] = x[size_t(c.n - 1)] = x[size_t(c.n / 2)] = top;
        std::vector<float> sorted = x;
        std::nth_element(sorted.begin(), sorted.begin() + c.top_k, sorted.end(), std::greater<float>());
        const float kth = sorted[size_t(c.top_k)];
        for (int i = 0; i < 6; ++i) x[size_t((7919 * (i + 1)) % c.n)] = kth;
      }
      sampling::Params p;
      p.temperature = c.temperature;
      p.top_k = c.top_k;
      p.top_p = c.top_p;
      p.min_p = c.min_p;
      const uint64_t seed = 1000 + static_cast<uint64_t>(trial);
      sampling::Sampler host(seed), twin(seed);
      const int32_t want = host.sample(x.data(), c.n, p, {});
      const double u = twin.draw();
      upload(dx, x);
      const cuda::SampleParams dp{c.temperature, c.top_k, c.top_p, c.min_p};
      good = good && ok(cuda::sample_top_k(dout.p, dx.p, c.n, dp, u, nullptr), "sample_top_k") &&
             ok(cudaDeviceSynchronize(), "sample sync");
      mismatches += download(dout, 1)[0] != want;
    }
    char shape_s[128];
    std::snprintf(shape_s, sizeof shape_s, "%d top-k %d T %g top-p %g min-p %g%s, %d draws", c.n, c.top_k,
                  c.temperature, c.top_p, c.min_p, c.ties ? " ties" : "", kTrials);
    report(r, good && mismatches == 0, true, "sample_top_k", shape_s, mismatches);
  }
}

// MoE: moe_route against the CPU reference's routing (softmax, top-k with ties to the lower id,
// renormalized or not): the same ids, weights within fp32 rounding. Routed GEMVs (one launch, the
// expert picked on the device) bit-identical to plain GEMVs over each pair's expert slice and row,
// for every int8-path format and the float formats, store and gate-up epilogues, token rows shared
// by a token's experts (x_div = k) or one row per pair (x_div = 1). moe_combine against a loop.
void check_moe(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int X : {8, 128, 512}) {
    for (int k : {1, 2, 8, 10}) {
      for (bool renorm : {true, false}) {
        if (k > X || (!renorm && k != 8)) continue;
        const int n = 8;
        std::vector<float> logits(size_t(n) * X);
        for (auto& v : logits) v = nd(rng) * 2.0f;
        if (X == 8) logits[3] = logits[5];  // a tie: the lower id first
        std::vector<int32_t> ids_ref(size_t(n) * k);
        std::vector<float> w_ref(ids_ref.size());
        for (int t = 0; t < n; ++t) {
          std::vector<float> p(logits.begin() + t * X, logits.begin() + (t + 1) * X);
          ref::softmax(p.data(), X);
          std::vector<int32_t> order(static_cast<size_t>(X));
          for (int i = 0; i < X; ++i) order[size_t(i)] = i;
          std::partial_sort(order.begin(), order.begin() + k, order.end(),
                            [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
          float sum = 0;
          for (int j = 0; j < k; ++j) sum += p[order[size_t(j)]];
          for (int j = 0; j < k; ++j) {
            ids_ref[size_t(t * k + j)] = order[size_t(j)];
            w_ref[size_t(t * k + j)] = renorm ? p[order[size_t(j)]] / sum : p[order[size_t(j)]];
          }
        }
        DeviceBuffer<float> dl(logits.size()), dw(w_ref.size());
        DeviceBuffer<int32_t> di(ids_ref.size());
        upload(dl, logits);
        const bool good = ok(cuda::moe_route(di.p, dw.p, dl.p, n, X, k, renorm, nullptr), "moe_route") &&
                          ok(cudaDeviceSynchronize(), "moe_route sync");
        const bool same_ids = download(di, ids_ref.size()) == ids_ref;
        const double e = nerr(download(dw, w_ref.size()), w_ref);
        report(r, good && same_ids && e < 1e-6, true, "moe_route",
               std::to_string(X) + " experts, top " + std::to_string(k) + (renorm ? " renorm" : "") + ", 8 tok" +
                   (same_ids ? "" : ", ids differ"),
               e);
      }
    }
  }
  // Routed GEMVs: 8 experts of rows x cols, 3 tokens x 2 experts each = 6 pairs.
  const int X = 8, k = 2, n = 3, pairs = n * k;
  const int64_t rows = 40, cols = 512;
  std::vector<int32_t> ids(static_cast<size_t>(pairs));
  for (auto& v : ids) v = static_cast<int32_t>(rng() % X);
  DeviceBuffer<int32_t> dids(ids.size());
  upload(dids, ids);
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS, GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    const bool q8 = cuda::gemv_q8_supports(static_cast<uint32_t>(t));
    std::vector<uint8_t> stack[2];
    std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dstack;
    int64_t expert_bytes = 0;
    for (int m = 0; m < 2; ++m) {  // gate and up stacks
      for (int e = 0; e < X; ++e) {
        std::vector<uint8_t> file;
        const std::vector<uint8_t> one = native_bytes(random_weights(rng, t, rows, cols, file));
        expert_bytes = static_cast<int64_t>(one.size());
        stack[m].insert(stack[m].end(), one.begin(), one.end());
      }
      dstack.push_back(std::make_unique<DeviceBuffer<uint8_t>>(stack[m].size()));
      upload(*dstack.back(), stack[m]);
    }
    for (int x_div : {k, 1}) {
      for (cuda::GemvOut out : {cuda::GemvOut::kStore, cuda::GemvOut::kGateUp}) {
        if (out == cuda::GemvOut::kGateUp && !q8) continue;
        const int x_rows = pairs / x_div;
        std::vector<float> x(size_t(x_rows * cols));
        for (auto& v : x) v = nd(rng);
        const ActInt8 xa = quantize_act(x);
        const std::vector<int8_t>& xq = xa.q;
        const std::vector<float2>& xds = xa.ds;
        DeviceBuffer<float> dx(x.size()), dy(size_t(pairs * rows)), dref(size_t(pairs * rows));
        DeviceBuffer<int8_t> dq(xq.size());
        DeviceBuffer<float2> dds(xds.size());
        upload(dx, x);
        upload(dq, xq);
        upload(dds, xds);
        cudaMemset(dy.p, 0xff, size_t(pairs * rows) * 4);
        const cuda::GemvRoute route{dids.p, expert_bytes, pairs, x_div};
        const uint32_t type = static_cast<uint32_t>(t);
        const uint8_t* w = dstack[0]->p;
        const uint8_t* w2 = out == cuda::GemvOut::kGateUp ? dstack[1]->p : nullptr;
        bool good = ok(q8 ? cuda::gemv_q8(w, w2, type, rows, cols, cuda::ActQ8{dq.p, dds.p}, 1, dy.p, out, 0, nullptr,
                                          &route)
                          : cuda::gemv(w, type, rows, cols, dx.p, 1, dy.p, out, nullptr, &route),
                       "routed gemv");
        for (int p = 0; p < pairs && good; ++p) {  // each pair alone, as a plain GEMV
          const int64_t xr = p / x_div, off = int64_t{ids[size_t(p)]} * expert_bytes;
          float* y = dref.p + p * rows;
          good = ok(q8 ? cuda::gemv_q8(w + off, w2 ? w2 + off : nullptr, type, rows, cols,
                                       cuda::ActQ8{dq.p + xr * cols, dds.p + xr * (cols / 32)}, 1, y, out, 0, nullptr)
                       : cuda::gemv(w + off, type, rows, cols, dx.p + xr * cols, 1, y, out, nullptr),
                    "gemv");
        }
        good = good && ok(cudaDeviceSynchronize(), "routed gemv sync");
        const auto a = download(dy, size_t(pairs * rows)), b = download(dref, size_t(pairs * rows));
        int differ = 0;
        for (size_t i = 0; i < a.size(); ++i) differ += !(a[i] == b[i]);
        report(r, good && differ == 0, true,
               fmt_name("routed gemv", t, out == cuda::GemvOut::kGateUp ? "gate-up" : ""),
               "8 experts 40 x 512, 6 pairs, x_div " + std::to_string(x_div) + ", outputs differing " +
                   std::to_string(differ),
               0.0);
      }
    }
  }
  // moe_combine: with and without a shared expert.
  for (bool shared : {false, true}) {
    const int64_t width = 2048 + 7;
    std::vector<float> x(size_t(n * width)), eo(size_t(pairs * width)), wts(static_cast<size_t>(pairs)), so(x.size()), sg(static_cast<size_t>(n));
    for (auto* v : {&x, &eo, &wts, &so, &sg})
      for (auto& f : *v) f = nd(rng);
    std::vector<float> ref = x;
    for (int t = 0; t < n; ++t)
      for (int64_t c = 0; c < width; ++c) {
        float acc = ref[size_t(t * width + c)];
        for (int j = 0; j < k; ++j) acc += wts[size_t(t * k + j)] * eo[size_t((t * k + j) * width + c)];
        if (shared) acc += so[size_t(t * width + c)] / (1.0f + std::exp(-sg[size_t(t)]));
        ref[size_t(t * width + c)] = acc;
      }
    DeviceBuffer<float> dx(x.size()), deo(eo.size()), dw(wts.size()), dso(so.size()), dsg(sg.size());
    upload(dx, x);
    upload(deo, eo);
    upload(dw, wts);
    upload(dso, so);
    upload(dsg, sg);
    const bool good = ok(cuda::moe_combine(dx.p, deo.p, dw.p, shared ? dso.p : nullptr, dsg.p, n, k, width, nullptr),
                         "moe_combine") &&
                      ok(cudaDeviceSynchronize(), "moe_combine sync");
    const double e = nerr(download(dx, x.size()), ref);
    report(r, good && e < 1e-6, true, "moe_combine", shared ? "3 tok x 2 experts + shared, 2055 wide" : "3 tok x 2 experts, 2055 wide", e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int n = cuda::device_count();
  if (n == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  char name[256];
  int maj = 0, min = 0;
  unsigned long long mem = 0;
  cuda::device_properties(0, name, sizeof name, &maj, &min, &mem);
  std::printf("device 0: %s (sm_%d%d, %.0f GiB)\n\n| kernel | shape | error | status |\n|---|---|---|---|\n", name, maj,
              min, mem / 1073741824.0);
  std::mt19937 rng(1234);
  ThreadPool pool(0);
  Result r;
  // bw24-kernel-check [NAME]: only the check families whose name contains NAME (e.g. gemm).
  const std::string only = argc > 1 ? argv[1] : "";
  auto run = [&](const char* name, auto&& fn) {
    if (only.empty() || std::string(name).find(only) != std::string::npos) fn();
  };
  run("rmsnorm", [&] { check_rmsnorm(rng, r); });
  run("rmsnorm_q8", [&] { check_rmsnorm_q8(rng, r); });
  run("qk_rope", [&] { check_qk_rope(rng, r); });
  run("attention", [&] { check_attention(rng, r); });
  run("gemv_float", [&] { check_gemv_float(rng, pool, r); });
  run("gemv_q8", [&] { check_gemv_q8(rng, pool, r); });
  run("gemv_q8_multi", [&] { check_gemv_q8_multi(rng, r); });
  run("dequant", [&] { check_dequant(rng, r); });
  run("gemm", [&] { check_gemm(rng, pool, r); });
  run("gemm_multi", [&] { check_gemm_multi(rng, r); });
  run("gemm_grouped", [&] { check_gemm_grouped(rng, pool, r); });
  run("gemm_fused", [&] { check_gemm_fused(rng, r); });
  run("flash_prefill", [&] { check_flash_prefill(rng, r); });
  run("argmax", [&] { check_argmax(rng, r); });
  run("gate_ops", [&] { check_gate_ops(rng, r); });
  run("gdn", [&] { check_gdn(rng, r); });
  run("moe", [&] { check_moe(rng, r); });
  run("sample", [&] { check_sample(rng, r); });
  std::printf("\n%d passed, %d failed\n", r.run - r.failed, r.failed);
  return r.failed ? 1 : 0;
}
