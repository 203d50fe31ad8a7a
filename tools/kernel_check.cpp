// bw24-kernel-check: every CUDA kernel against the CPU reference (lib/ref) on fresh random inputs
// over swept shapes (tile-boundary sizes and real model widths), output buffers poisoned with NaN
// before each run. Quantized kernels are compared with the reference matmul over the same
// quantized bytes. Prints a table; exit 0 all green, 1 any failure, 77 no CUDA device (skipped).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda/common/device.h"
#include "cuda/gemv/gemv.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "lib/core/dtype.h"
#include "lib/core/thread_pool.h"
#include "lib/quant/traits.h"
#include "lib/ref/ops.h"

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

void check_gemv(std::mt19937& rng, ThreadPool& pool, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const GgmlType types[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                            GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K};
  for (GgmlType t : types) {
    const quant::QuantTraits* q = quant::traits(t);
    for (int64_t cols : {256, 512, 4096}) {
      for (int64_t rows : {1, 7, 33, 128, 4096}) {
        for (int nt : {1, 2, 8}) {
          std::vector<float> wf(size_t(rows * cols)), x(size_t(nt * cols));
          for (auto& v : wf) v = nd(rng) * 0.05f;
          for (auto& v : x) v = nd(rng);
          const uint64_t rb = quant::row_bytes(*q->info, cols);
          std::vector<uint8_t> wq(rb * rows);
          for (int64_t i = 0; i < rows; ++i) q->quantize(&wf[size_t(i * cols)], &wq[size_t(i * rb)], cols);
          loaders::TensorInfo ti;
          ti.type = static_cast<uint32_t>(t);
          ti.n_dims = 2;
          ti.ne = {cols, rows, 1, 1};
          ti.data = wq.data();
          ti.n_bytes = wq.size();
          std::vector<float> ref(size_t(nt * rows)), y(ref.size());
          ref::matmul(pool, ti, x.data(), nt, ref.data());
          DeviceBuffer<uint8_t> dw(wq.size());
          DeviceBuffer<float> dx(x.size()), dy(y.size());
          cudaMemcpy(dw.p, wq.data(), wq.size(), cudaMemcpyHostToDevice);
          cudaMemcpy(dx.p, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
          cudaMemset(dy.p, 0xff, y.size() * 4);
          bool good = ok(cuda::gemv(dw.p, ti.type, rows, cols, dx.p, nt, dy.p, nullptr), "gemv") &&
                      ok(cudaDeviceSynchronize(), "gemv sync");
          cudaMemcpy(y.data(), dy.p, y.size() * 4, cudaMemcpyDeviceToHost);
          double e = nerr(y, ref);
          good = good && e < 1e-5;  // fp32 accumulation on both sides (gates.md)
          ++r.run;
          r.failed += !good;
          if (!good || (rows == 4096 && cols == 4096))
            std::printf("| gemv %s | %lld x %lld, %d tok | nerr %.2e | %s |\n", std::string(q->info->name).c_str(),
                        static_cast<long long>(rows), static_cast<long long>(cols), nt, e, good ? "ok" : "FAIL");
        }
      }
    }
  }
}

}  // namespace

int main() {
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
  check_rmsnorm(rng, r);
  check_gemv(rng, pool, r);
  std::printf("\n%d passed, %d failed\n", r.run - r.failed, r.failed);
  return r.failed ? 1 : 0;
}
