// bw24-kernel-check, rMSNorm (f32 and int8 outputs) and the decode GEMVs (float and int8 paths,
// multi-matrix launches).
#include "tools/kernel_check/check.h"

namespace bw24::kcheck {
namespace {

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

// The formats of the int8 GEMV (cuda::gemv_q8_supports).
constexpr GgmlType kInt8PathTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};

}  // namespace

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
  // One-token F16 / BF16 launches take the streamed kernel on sm_90 (the rows above): against
  // version 2 at model shapes (several chunks per row, CTAs with more items than ring stages).
  if (!cuda::gemv_q8_streamed()) return;
  for (GgmlType t : {GgmlType::F16, GgmlType::BF16}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 4096}, std::pair<int64_t, int64_t>{1000, 12288}}) {
      std::vector<uint8_t> wq;
      loaders::TensorInfo ti = random_weights(rng, t, rows, cols, wq);
      std::vector<float> x(static_cast<size_t>(cols));
      for (auto& v : x) v = nd(rng);
      DeviceBuffer<uint8_t> dw(wq.size());
      DeviceBuffer<float> dx(x.size()), dy(static_cast<size_t>(rows));
      upload_weights(dw, ti);
      upload(dx, x);
      std::vector<float> out[2];
      bool good = true;
      for (int streamed = 0; streamed < 2; ++streamed) {
        cuda::gemv_q8_set_streamed(streamed == 1);
        good = good && ok(cuda::gemv(dw.p, ti.type, rows, cols, dx.p, 1, dy.p, cuda::GemvOut::kStore, nullptr), "gemv") &&
               ok(cudaDeviceSynchronize(), "gemv sync");
        out[streamed] = download(dy, size_t(rows));
      }
      cuda::gemv_q8_set_streamed(true);
      int64_t differ = 0;
      for (size_t i = 0; i < out[0].size(); ++i) differ += !(out[0][i] == out[1][i]);
      const double e = nerr(out[1], out[0]);
      report(r, good && e < 1e-6, true, fmt_name("gemv streamed", t, ""),
             shape(rows, cols, 1) + ", outputs not bit-equal to version 2: " + std::to_string(differ), e);
    }
  }
}

// Q, K, V (and a fourth, as a delta-net layer's in_b / in_a) of a float model in one launch
// (gemv_multi): each segment's output bit-identical to its own gemv launch. F16 / BF16 at one token
// take one streamed launch (partial row groups at 17 and 9 rows, and Qwen3-8B's 4096 + 1024 + 1024 x
// 4096 with 32 more rows, where CTAs take items of two segments); other token counts and F32 one
// launch a segment. Every output also within the gemv bound of the reference.
void check_gemv_float_multi(std::mt19937& rng, ThreadPool& pool, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Case {
    int64_t rows[cuda::kMaxGemvSegments], cols;
    int nt;
  };
  constexpr int kSegs = cuda::kMaxGemvSegments;
  static_assert(kSegs == 4, "the cases list four segments");
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    for (const Case& c :
         {Case{{64, 17, 16, 9}, 512, 1}, Case{{64, 17, 16, 9}, 512, 2}, Case{{4096, 1024, 1024, 32}, 4096, 1}}) {
      std::vector<float> x(size_t(c.nt * c.cols));
      for (auto& v : x) v = nd(rng);
      DeviceBuffer<float> dx(x.size());
      upload(dx, x);
      bool good = true;
      int64_t differ = 0;
      double worst = 0;
      std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
      std::vector<std::unique_ptr<DeviceBuffer<float>>> single, multi;
      std::vector<loaders::TensorInfo> ti;
      std::vector<std::vector<uint8_t>> wq(kSegs);
      cuda::GemvSegment segs[kSegs];
      for (int i = 0; i < kSegs; ++i) {
        const size_t n_out = size_t(c.nt * c.rows[i]);
        ti.push_back(random_weights(rng, t, c.rows[i], c.cols, wq[size_t(i)]));
        dw.push_back(std::make_unique<DeviceBuffer<uint8_t>>(wq[size_t(i)].size()));
        upload_weights(*dw.back(), ti.back());
        single.push_back(std::make_unique<DeviceBuffer<float>>(n_out));
        multi.push_back(std::make_unique<DeviceBuffer<float>>(n_out));
        cudaMemset(multi.back()->p, 0xff, n_out * 4);  // NaN poison
        good = good && ok(cuda::gemv(dw.back()->p, ti.back().type, c.rows[i], c.cols, dx.p, c.nt, single.back()->p,
                                     cuda::GemvOut::kStore, nullptr),
                          "gemv");
        segs[i] = {dw.back()->p, multi.back()->p, c.rows[i]};
      }
      good = good &&
             ok(cuda::gemv_multi(segs, kSegs, static_cast<uint32_t>(t), c.cols, dx.p, c.nt, cuda::GemvOut::kStore,
                                 nullptr),
                "gemv_multi") &&
             ok(cudaDeviceSynchronize(), "gemv_multi sync");
      for (int i = 0; i < kSegs && good; ++i) {
        const size_t n_out = size_t(c.nt * c.rows[i]);
        const auto a = download(*single[size_t(i)], n_out), b = download(*multi[size_t(i)], n_out);
        for (size_t k = 0; k < n_out; ++k) differ += !(a[k] == b[k]);
        std::vector<float> ref(n_out);
        ref::matmul(pool, ti[size_t(i)], x.data(), c.nt, ref.data());
        worst = std::max(worst, bound_err(b, ref, abs_dot(ti[size_t(i)], x, c.nt, nullptr)));
      }
      good = good && differ == 0 && worst < 1e-5;
      report(r, good, true, fmt_name("gemv_multi", t, ""),
             segments_shape(c.rows, kSegs, c.cols) + ", " + std::to_string(c.nt) +
                 " tok, outputs not bit-equal to gemv: " + std::to_string(differ),
             worst);
    }
  }
  // Refused, before any launch: no segment, five, an empty one, a null weight, the gate-up epilogue.
  DeviceBuffer<float> dx(512), dy(64);
  DeviceBuffer<uint8_t> dw(64 * 512 * 2);
  const cuda::GemvSegment seg{dw.p, dy.p, 64}, empty{dw.p, dy.p, 0}, null_w{nullptr, dy.p, 64};
  const cuda::GemvSegment five[5] = {seg, seg, seg, seg, seg};
  const auto bf16 = static_cast<uint32_t>(GgmlType::BF16);
  const bool refused = cuda::gemv_multi(&seg, 0, bf16, 512, dx.p, 1, cuda::GemvOut::kStore, nullptr) == cudaErrorInvalidValue &&
                       cuda::gemv_multi(five, 5, bf16, 512, dx.p, 1, cuda::GemvOut::kStore, nullptr) == cudaErrorInvalidValue &&
                       cuda::gemv_multi(&empty, 1, bf16, 512, dx.p, 1, cuda::GemvOut::kStore, nullptr) == cudaErrorInvalidValue &&
                       cuda::gemv_multi(&null_w, 1, bf16, 512, dx.p, 1, cuda::GemvOut::kStore, nullptr) == cudaErrorInvalidValue &&
                       cuda::gemv_multi(&seg, 1, bf16, 512, dx.p, 1, cuda::GemvOut::kGateUp, nullptr) == cudaErrorInvalidValue;
  report(r, refused, true, "gemv_multi refusals", "0 / 5 segments, 0 rows, null weight, gate-up", 0.0);
}

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

// Q, K, V and a fourth matrix in one launch: each segment's output bit-identical to its own
// single-matrix launch.
void check_gemv_q8_multi(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  constexpr int kSegs = cuda::kMaxGemvSegments;
  static_assert(kSegs == 4, "rows lists four segments");
  for (GgmlType t : kInt8PathTypes) {
    const int64_t cols = 512, rows[kSegs] = {64, 17, 16, 9};
    const int nt = 2;
    std::vector<uint8_t> wq[kSegs];
    std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
    for (int i = 0; i < kSegs; ++i) {
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
    cuda::GemvSegment segs[kSegs];
    for (int i = 0; i < kSegs; ++i) {
      single.push_back(std::make_unique<DeviceBuffer<float>>(size_t(nt * rows[i])));
      multi.push_back(std::make_unique<DeviceBuffer<float>>(size_t(nt * rows[i])));
      cudaMemset(multi.back()->p, 0xff, size_t(nt * rows[i]) * 4);
      good = good && ok(cuda::gemv_q8(dw[size_t(i)]->p, nullptr, static_cast<uint32_t>(t), rows[i], cols, x, nt,
                                      single.back()->p, cuda::GemvOut::kStore, 0, nullptr),
                        "gemv_q8");
      segs[i] = {dw[size_t(i)]->p, multi.back()->p, rows[i]};
    }
    good = good && ok(cuda::gemv_q8_multi(segs, kSegs, nullptr, static_cast<uint32_t>(t), cols, x, nt,
                                          cuda::GemvOut::kStore, 0, nullptr),
                      "gemv_q8_multi") &&
           ok(cudaDeviceSynchronize(), "sync");
    int differ = 0;
    for (int i = 0; i < kSegs; ++i) {
      const auto a = download(*single[size_t(i)], size_t(nt * rows[i])), b = download(*multi[size_t(i)], size_t(nt * rows[i]));
      for (size_t k = 0; k < a.size(); ++k) differ += !(a[k] == b[k]);
    }
    good = good && differ == 0;
    report(r, good, true, fmt_name("gemv_q8_multi", t, ""),
           segments_shape(rows, kSegs, cols) + ", " + std::to_string(nt) + " tok, outputs differing " + std::to_string(differ),
           0.0);
  }
}

// The streamed one-token kernel (sm_90: Q4_K, Q5_K, Q6_K, Q8_0) against the warp-per-row kernel
// over the same int8 activations: the same integer dot products, summed in another order (a
// K-quant lane takes 64 weights, not 32; a Q8_0 lane adds its two blocks before its accumulator),
// so the outputs agree to float rounding (normalized error < 1e-6, 1e-5 for shapes of fewer than
// 64 outputs; each output finite). Shapes cover partial K chunks (9 and 1 blocks of 256, where
// Q6_K falls back to the warp-per-row kernel: blocks per row not a multiple of 8, as does its
// gate-up; 24 blocks: a chunk of 16 and one of 8), several chunks per row (48 blocks), rows of 8
// blocks or fewer (Q6_K and Q8_0 pieces of 8), partial row groups, CTAs with more items than ring
// stages (4096 x 12288, 8192 x 4096), three-segment launches and four (Qwen3.5-9B's delta-net inputs:
// in_qkv, in_z, in_b, in_a). Q4_K / Q5_K rows of more than 32 blocks take pieces of 24 in their store
// and add launches (48 blocks: two whole pieces; 68, Qwen3.5-27B's down: 24 + 24 + 20).
void check_gemv_q8_streamed(std::mt19937& rng, Result& r) {
  if (!cuda::gemv_q8_streamed()) {
    std::printf("SKIPPED gemv_q8_streamed: turned off (BW24_GEMV_STREAM=0)\n");
    return;
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Shape {
    int64_t rows[cuda::kMaxGemvSegments];
    int n;
    int64_t cols;
  };
  const Shape shapes[] = {{{1}, 1, 256},    {{33}, 1, 2304},  {{33}, 1, 6144},  {{4096}, 1, 4096},
                          {{4096}, 1, 12288}, {{1000}, 1, 4096}, {{37}, 1, 4096},    {{8192}, 1, 4096}, {{4096, 1024, 1024}, 3, 4096},
                          {{64, 17, 16}, 3, 512},  {{4096, 512, 512}, 3, 2048}, {{8192}, 1, 2048},
                          {{8192, 4096, 32, 32}, 4, 4096}, {{64, 17, 16, 9}, 4, 512}, {{40}, 1, 17408}};
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_0}) {
    for (const Shape& sh : shapes) {
      // Weights and activations once per shape (the host quantizers are the slow part: Q6_K at
      // 4096 x 12288 takes seconds), then every epilogue.
      const int64_t cols = sh.cols;
      std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
      std::vector<std::vector<uint8_t>> wqs(size_t(sh.n + 1));
      std::vector<loaders::TensorInfo> tis;
      for (int i = 0; i < sh.n + 1; ++i) {  // the last one: the up matrix of gate-up
        tis.push_back(random_weights(rng, t, sh.rows[i < sh.n ? i : 0], cols, wqs[size_t(i)]));
        dw.push_back(std::make_unique<DeviceBuffer<uint8_t>>(wqs[size_t(i)].size()));
        upload_weights(*dw.back(), tis.back());
      }
      std::vector<float> x(static_cast<size_t>(cols));
      for (auto& v : x) v = nd(rng);
      const ActInt8 xa = quantize_act(x);
      DeviceBuffer<int8_t> dq(xa.q.size());
      DeviceBuffer<float2> dds(xa.ds.size());
      upload(dq, xa.q);
      upload(dds, xa.ds);
      std::vector<float> y0s[cuda::kMaxGemvSegments];
      for (int i = 0; i < sh.n; ++i) {
        y0s[i].resize(size_t(sh.rows[i]));
        for (auto& v : y0s[i]) v = nd(rng);
      }
      for (cuda::GemvOut out : {cuda::GemvOut::kStore, cuda::GemvOut::kAdd, cuda::GemvOut::kGateUp}) {
        if (sh.n > 1 && out != cuda::GemvOut::kStore) continue;
        bool good = true;
        // One launch from the initial outputs y0s, all segments' outputs in a row.
        auto run = [&](bool streamed) {
          cuda::gemv_q8_set_streamed(streamed);
          std::vector<std::unique_ptr<DeviceBuffer<float>>> dy;
          cuda::GemvSegment segs[cuda::kMaxGemvSegments];
          for (int i = 0; i < sh.n; ++i) {
            dy.push_back(std::make_unique<DeviceBuffer<float>>(size_t(sh.rows[i])));
            upload(*dy.back(), y0s[i]);
            segs[i] = {dw[size_t(i)]->p, dy.back()->p, sh.rows[i]};
          }
          const void* w2 = out == cuda::GemvOut::kGateUp ? dw.back()->p : nullptr;
          good = good &&
                 ok(cuda::gemv_q8_multi(segs, sh.n, w2, static_cast<uint32_t>(t), cols, {dq.p, dds.p}, 1, out, 0, nullptr),
                    "gemv_q8_multi") &&
                 ok(cudaDeviceSynchronize(), "sync");
          std::vector<float> all;
          for (int i = 0; i < sh.n; ++i) {
            const auto y = download(*dy[size_t(i)], size_t(sh.rows[i]));
            all.insert(all.end(), y.begin(), y.end());
          }
          return all;
        };
        const std::vector<float> warp = run(false), stream = run(true);
        cuda::gemv_q8_set_streamed(true);
        int64_t differ = 0;
        for (size_t k = 0; k < warp.size(); ++k) differ += !(warp[k] == stream[k]);
        // Fewer than 64 outputs: the normalized error is not averaged over many, and one output of a
        // dot of 256 random terms that cancel to a small sum carries its terms' rounding relative to
        // that small sum (next144: a 1 x 256 row at 2.3e-5 of itself). Those are measured against the
        // scale of the rounding instead, sum |w x| (+ |y0|) per output (abs_dot; gate-up silu(g) u:
        // 2.1 sum|w_g x| sum|w_u x| bounds its first-order error over that of g and u).
        double e = 0;
        if (warp.size() < 64) {
          std::vector<float> scale;
          for (int i = 0; i < sh.n; ++i) {
            const std::vector<float> si =
                abs_dot(tis[size_t(i)], xa.values, 1, out == cuda::GemvOut::kAdd ? &y0s[i] : nullptr);
            scale.insert(scale.end(), si.begin(), si.end());
          }
          if (out == cuda::GemvOut::kGateUp) {
            const std::vector<float> su = abs_dot(tis.back(), xa.values, 1, nullptr);
            for (size_t k = 0; k < scale.size(); ++k) scale[k] *= 2.1f * su[k];
          }
          e = bound_err(stream, warp, scale);
        } else {
          e = nerr(stream, warp);
        }
        good = good && e < (warp.size() < 64 ? 1e-5 : 1e-6);
        const std::string what = segments_shape(sh.rows, sh.n, cols);
        const char* tag = out == cuda::GemvOut::kAdd ? "add" : out == cuda::GemvOut::kGateUp ? "gate-up" : "";
        report(r, good, true, fmt_name("gemv_q8_streamed", t, tag),
               what + ", outputs not bit-equal " + std::to_string(differ) + "/" + std::to_string(warp.size()), e);
      }
    }
  }
}

// The overlapping chain of a Q4_K_M attention layer's products (cuda::GemvChain): rmsnorm_q8 writes
// the int8 input, Q + K (Q4_K, two segments) launch kWaitFirst and V (Q6_K) kIndependent, reading it
// without a wait. Outputs bit-equal to the same launches chained plainly, both launches reporting
// that they took their chain, repeated so that a V that read its input early would show.
void check_gemv_q8_chain(std::mt19937& rng, Result& r) {
  if (!cuda::gemv_q8_streamed() || !cuda::gemv_q8_streams(static_cast<uint32_t>(GgmlType::Q6_K), cuda::GemvOut::kStore)) {
    std::printf("SKIPPED gemv_q8_chain: the streamed kernel is off or needs sm_90\n");
    return;
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t cols : {int64_t{2048}, int64_t{4096}}) {
    const int64_t rq = 2 * cols, rk = cols / 4, rv = cols / 4;
    std::vector<uint8_t> wq_file, wk_file, wv_file;
    const loaders::TensorInfo tq = random_weights(rng, GgmlType::Q4_K, rq, cols, wq_file);
    const loaders::TensorInfo tk = random_weights(rng, GgmlType::Q4_K, rk, cols, wk_file);
    const loaders::TensorInfo tv = random_weights(rng, GgmlType::Q6_K, rv, cols, wv_file);
    DeviceBuffer<uint8_t> dwq(wq_file.size()), dwk(wk_file.size()), dwv(wv_file.size());
    upload_weights(dwq, tq);
    upload_weights(dwk, tk);
    upload_weights(dwv, tv);
    std::vector<float> norm_w(static_cast<size_t>(cols));
    for (auto& v : norm_w) v = 1.0f + 0.1f * nd(rng);
    DeviceBuffer<float> dnw(norm_w.size()), dx(norm_w.size()), dyq(static_cast<size_t>(rq)), dyk(static_cast<size_t>(rk)),
        dyv(static_cast<size_t>(rv));
    DeviceBuffer<int8_t> dq(static_cast<size_t>(cols));
    DeviceBuffer<float2> dds(static_cast<size_t>(cols / 32));
    upload(dnw, norm_w);
    auto run = [&](bool overlap, const std::vector<float>& x, bool& chained) {
      upload(dx, x);
      cudaMemset(dq.p, 0, size_t(cols));  // a V that read before the norm would read zeros
      cudaDeviceSynchronize();
      const cuda::GemvSegment qk[2] = {{dwq.p, dyq.p, rq}, {dwk.p, dyk.p, rk}}, v[1] = {{dwv.p, dyv.p, rv}};
      bool took_qk = false, took_v = false;
      const auto first = overlap ? cuda::GemvChain::kWaitFirst : cuda::GemvChain::kPlain;
      const auto second = overlap ? cuda::GemvChain::kIndependent : cuda::GemvChain::kPlain;
      bool good = ok(cuda::rmsnorm_q8(nullptr, dq.p, dds.p, dx.p, dnw.p, 1, static_cast<int>(cols), 1e-6f, false, nullptr),
                     "rmsnorm_q8") &&
                  ok(cuda::gemv_q8_multi(qk, 2, nullptr, static_cast<uint32_t>(GgmlType::Q4_K), cols, {dq.p, dds.p}, 1,
                                         cuda::GemvOut::kStore, 0, nullptr, first, &took_qk),
                     "gemv_q8_multi Q + K") &&
                  ok(cuda::gemv_q8_multi(v, 1, nullptr, static_cast<uint32_t>(GgmlType::Q6_K), cols, {dq.p, dds.p}, 1,
                                         cuda::GemvOut::kStore, 0, nullptr, second, &took_v),
                     "gemv_q8_multi V") &&
                  ok(cudaDeviceSynchronize(), "sync");
      chained = good && took_qk && took_v;
      std::vector<float> all = download(dyq, size_t(rq));
      for (auto* d : {&dyk, &dyv}) {
        const auto y = download(*d, size_t(d == &dyk ? rk : rv));
        all.insert(all.end(), y.begin(), y.end());
      }
      return good ? all : std::vector<float>{};
    };
    int64_t differ = 0, outputs = 0;
    bool chained_all = true, good = true;
    for (int rep = 0; rep < 8; ++rep) {
      std::vector<float> x(static_cast<size_t>(cols));
      for (auto& v : x) v = nd(rng);
      bool c0 = false, c1 = false;
      const std::vector<float> plain = run(false, x, c0), over = run(true, x, c1);
      good = good && !plain.empty() && plain.size() == over.size();
      chained_all = chained_all && c1;
      for (size_t k = 0; good && k < plain.size(); ++k) differ += !(plain[k] == over[k]);
      outputs += static_cast<int64_t>(plain.size());
    }
    report(r, good && chained_all && differ == 0, true, "gemv_q8_chain",
           "rmsnorm_q8, Q + K (Q4_K " + std::to_string(rq) + " + " + std::to_string(rk) + ") waiting first, V (Q6_K " +
               std::to_string(rv) + ") independent, K " + std::to_string(cols) + ", 8 inputs: chained " +
               (chained_all ? "yes" : "no") + ", outputs not bit-equal " + std::to_string(differ) + "/" +
               std::to_string(outputs),
           0.0);
  }
}

// gemv_q8's room (CtaRoom): the O projection of Qwen3-30B-A3B (Q4_K, 2,048 x 4,096, residual add)
// given the cluster router's CTA (moe_gate_room) outputs the same bits as without, and its padded
// CTAs fit the SM twice beside that router CTA (shared memory and registers) but not three times;
// the 35B's router (256 experts: 136 KB CTAs, room for one O CTA only) leaves the launch as it was.
void check_gemv_q8_room(std::mt19937& rng, Result& r) {
  const auto q4k = static_cast<uint32_t>(GgmlType::Q4_K), f32 = static_cast<uint32_t>(GgmlType::F32);
  cuda::CtaRoom router{};
  if (!cuda::gemv_q8_streams(q4k, cuda::GemvOut::kAdd) ||
      cuda::moe_gate_room(f32, 1, 128, 2048, 8, true, &router) != cudaSuccess || router.smem == 0) {
    cudaGetLastError();
    std::printf("SKIPPED gemv_q8_room: the streamed kernel or the cluster router is off or needs sm_90\n");
    return;
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t rows = 2048, cols = 4096;
  std::vector<uint8_t> w_file;
  const loaders::TensorInfo ti = random_weights(rng, GgmlType::Q4_K, rows, cols, w_file);
  DeviceBuffer<uint8_t> dw(w_file.size());
  upload_weights(dw, ti);
  std::vector<float> x(static_cast<size_t>(cols)), y0(static_cast<size_t>(rows));
  for (auto& v : x) v = nd(rng);
  for (auto& v : y0) v = nd(rng);
  const ActInt8 xa = quantize_act(x);
  DeviceBuffer<int8_t> dq(xa.q.size());
  DeviceBuffer<float2> dds(xa.ds.size());
  DeviceBuffer<float> dy(y0.size());
  upload(dq, xa.q);
  upload(dds, xa.ds);
  auto run = [&](const cuda::CtaRoom* room, std::vector<float>* y) {
    upload(dy, y0);
    const bool good = ok(cuda::gemv_q8(dw.p, nullptr, q4k, rows, cols, {dq.p, dds.p}, 1, dy.p, cuda::GemvOut::kAdd, 0,
                                       nullptr, nullptr, room),
                         "gemv_q8") &&
                      ok(cudaDeviceSynchronize(), "sync");
    *y = download(dy, y0.size());
    return good;
  };
  cuda::CtaRoom big{};
  std::vector<float> plain, roomed, beside_big;
  const int64_t raised0 = cuda::gemv_stream_last_room().raised;
  bool good = run(nullptr, &plain) && run(&router, &roomed);
  const cuda::GemvRoomRecord rec = cuda::gemv_stream_last_room();
  good = good && ok(cuda::moe_gate_room(f32, 1, 256, 2048, 8, true, &big), "moe_gate_room") && big.smem > 0 &&
         run(&big, &beside_big);
  const int64_t raised = cuda::gemv_stream_last_room().raised - raised0;  // the 128-expert router's launch only
  const cuda::SmLimits sm = cuda::sm_limits();
  const bool fits = rec.ctas_per_sm == 2 && 2 * rec.cta.smem + router.smem <= sm.smem &&
                    2 * rec.cta.regs + router.regs <= sm.regs && 3 * rec.cta.smem > sm.smem;
  int64_t differ = 0;
  for (size_t k = 0; good && k < plain.size(); ++k) differ += !(plain[k] == roomed[k]) + !(plain[k] == beside_big[k]);
  report(r, good && fits && raised == 1 && differ == 0, true, "gemv_q8_room",
         "Q4_K 2048 x 4096 add beside a router CTA of " + std::to_string(router.smem) + " B, " +
             std::to_string(router.regs) + " registers: CTAs of " + std::to_string(rec.cta.smem) + " B, " +
             std::to_string(rec.cta.regs) + " registers, " + std::to_string(rec.ctas_per_sm) + " an SM of " +
             std::to_string(sm.smem) + " B; launches raised " + std::to_string(raised) +
             " (the 256-expert router's none); outputs not bit-equal " + std::to_string(differ) + "/" +
             std::to_string(2 * plain.size()),
         0.0);
}

// The one-token gate-up writing its int8 output too (cuda::gemv_q8_gate_up_q8): y, codes and scales
// bit-equal to the plain streamed gate-up followed by rmsnorm_q8 without a norm, at the Qwen3-8B shape
// (12,288 x 4,096: 384 CTAs of one block), a grid of three blocks a CTA and a short one (those two taken
// by the "always" hook: their plain grids hold more CTAs); Q4_K and Q5_K. With the switch off the launch
// reports nothing written and y keeps its bits. Then the rule without the hook: taken at 12,288 rows,
// not at 3,072 (96 CTAs of four groups where the plain grid has 384), both 2,048 wide.
void check_gemv_q8_gate_up_q8(std::mt19937& rng, Result& r) {
  const auto q4k = static_cast<uint32_t>(GgmlType::Q4_K);
  if (!cuda::gemv_q8_streams(q4k, cuda::GemvOut::kGateUp)) {
    std::printf("SKIPPED gemv_q8_gate_up_q8: the streamed kernel is off or needs sm_90\n");
    return;
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Shape {
    GgmlType type;
    int64_t rows, cols;
  };
  for (const Shape c : {Shape{GgmlType::Q4_K, 12288, 4096}, Shape{GgmlType::Q5_K, 12288, 4096},
                        Shape{GgmlType::Q4_K, 32 * 1024, 2048}, Shape{GgmlType::Q4_K, 96, 2048}}) {
    const auto type = static_cast<uint32_t>(c.type);
    cuda::gemv_q8_set_gate_up_q8_always(true);
    std::vector<uint8_t> wg_file, wu_file;
    const loaders::TensorInfo tg = random_weights(rng, c.type, c.rows, c.cols, wg_file);
    const loaders::TensorInfo tu = random_weights(rng, c.type, c.rows, c.cols, wu_file);
    DeviceBuffer<uint8_t> dwg(wg_file.size()), dwu(wu_file.size());
    upload_weights(dwg, tg);
    upload_weights(dwu, tu);
    std::vector<float> x(static_cast<size_t>(c.cols));
    for (auto& v : x) v = nd(rng);
    const size_t rows = static_cast<size_t>(c.rows);
    DeviceBuffer<float> dx(x.size()), dy(rows), dy2(rows);
    DeviceBuffer<int8_t> dxq(x.size()), dq(rows), dq2(rows);
    DeviceBuffer<float2> dxds(x.size() / 32), dds(rows / 32), dds2(rows / 32);
    upload(dx, x);
    bool written = true, written_off = true;
    bool good =
        ok(cuda::rmsnorm_q8(nullptr, dxq.p, dxds.p, dx.p, nullptr, 1, static_cast<int>(c.cols), 0.0f, false, nullptr),
           "rmsnorm_q8 (input)") &&
        ok(cuda::gemv_q8(dwg.p, dwu.p, type, c.rows, c.cols, {dxq.p, dxds.p}, 1, dy.p, cuda::GemvOut::kGateUp, 0, nullptr),
           "gemv_q8 gate-up") &&
        ok(cuda::rmsnorm_q8(nullptr, dq.p, dds.p, dy.p, nullptr, 1, static_cast<int>(c.rows), 0.0f, false, nullptr),
           "rmsnorm_q8 (output)") &&
        ok(cuda::gemv_q8_gate_up_q8(dwg.p, dwu.p, type, c.rows, c.cols, {dxq.p, dxds.p}, dy2.p, 0, dq2.p, dds2.p,
                                    nullptr, &written),
           "gemv_q8_gate_up_q8") &&
        ok(cudaDeviceSynchronize(), "sync");
    const std::vector<float> y = download(dy, rows), y2 = download(dy2, rows);
    const std::vector<int8_t> q = download(dq, rows), q2 = download(dq2, rows);
    const std::vector<float2> ds = download(dds, rows / 32), ds2 = download(dds2, rows / 32);
    int64_t differ = 0;
    for (size_t i = 0; i < rows; ++i) differ += std::memcmp(&y[i], &y2[i], 4) != 0 || q[i] != q2[i];
    for (size_t b = 0; b < ds.size(); ++b) differ += std::memcmp(&ds[b], &ds2[b], sizeof(float2)) != 0;
    // The switch off: the plain gate-up, nothing written to q.
    cuda::gemv_q8_set_gate_up_q8(false);
    cudaMemset(dy2.p, 0xff, rows * 4);
    good = good &&
           ok(cuda::gemv_q8_gate_up_q8(dwg.p, dwu.p, type, c.rows, c.cols, {dxq.p, dxds.p}, dy2.p, 0, dq2.p, dds2.p,
                                       nullptr, &written_off),
              "gemv_q8_gate_up_q8 (off)") &&
           ok(cudaDeviceSynchronize(), "sync");
    cuda::gemv_q8_set_gate_up_q8(true);
    cuda::gemv_q8_set_gate_up_q8_always(false);
    const std::vector<float> y3 = download(dy2, rows);
    int64_t differ_off = 0;
    for (size_t i = 0; i < rows; ++i) differ_off += std::memcmp(&y[i], &y3[i], 4) != 0;
    report(r, good && written && !written_off && differ == 0 && differ_off == 0, true, "gemv_q8_gate_up_q8",
           std::string(c.type == GgmlType::Q4_K ? "Q4_K " : "Q5_K ") + std::to_string(c.rows) + " x " +
               std::to_string(c.cols) + ": written " + (written ? "yes" : "no") + ", y / codes / scales not bit-equal " +
               std::to_string(differ) + "; off: written " + (written_off ? "yes" : "no") + ", y not bit-equal " +
               std::to_string(differ_off),
           0.0);
  }
  // The rule: whether the launch is taken where no hook asks for it.
  for (const int64_t rows : {int64_t{12288}, int64_t{3072}}) {
    const int64_t cols = 2048;  // 8 blocks: whole gate-up pieces (StreamCut::kOne)
    std::vector<uint8_t> wg_file, wu_file;
    const loaders::TensorInfo tg = random_weights(rng, GgmlType::Q4_K, rows, cols, wg_file);
    const loaders::TensorInfo tu = random_weights(rng, GgmlType::Q4_K, rows, cols, wu_file);
    DeviceBuffer<uint8_t> dwg(wg_file.size()), dwu(wu_file.size());
    upload_weights(dwg, tg);
    upload_weights(dwu, tu);
    DeviceBuffer<int8_t> dxq(static_cast<size_t>(cols)), dq(static_cast<size_t>(rows));
    DeviceBuffer<float2> dxds(static_cast<size_t>(cols / 32)), dds(static_cast<size_t>(rows / 32));
    DeviceBuffer<float> dy(static_cast<size_t>(rows));
    cudaMemset(dxq.p, 1, size_t(cols));
    cudaMemset(dxds.p, 0, size_t(cols / 32) * sizeof(float2));
    bool written = false;
    const bool good = ok(cuda::gemv_q8_gate_up_q8(dwg.p, dwu.p, q4k, rows, cols, {dxq.p, dxds.p}, dy.p, 0, dq.p, dds.p,
                                                  nullptr, &written),
                         "gemv_q8_gate_up_q8") &&
                      ok(cudaDeviceSynchronize(), "sync");
    const bool want = rows == 12288;
    report(r, good && written == want, true, "gemv_q8_gate_up_q8 rule",
           "Q4_K " + std::to_string(rows) + " x " + std::to_string(cols) + ": written " + (written ? "yes" : "no") +
               " (expected " + (want ? "yes" : "no") + ")",
           0.0);
  }
}

// rmsnorm_q8 against ref::rmsnorm + ref::quantize_act_q8: the f32 output within fp32 tolerance, the
// int8 codes equal except where the reference value sits within rounding distance of a .5 step.
void check_rmsnorm_q8(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int n : {32, 576, 4096, 12288}) {
    for (int rows : {1, 5}) {
      for (int variant = 0; variant < 3; ++variant) {
        // 0, 1: with / without the norm, blocks of 32; 2: with the norm, one scale a 256 (per256)
        const bool with_norm = variant != 1, per256 = variant == 2;
        if (per256 && n % 256 != 0) continue;
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
        if (per256)  // the same rounding with the max over 256: d = amax / 127, q = round(v * (1 / d))
          for (size_t b = 0; b < x.size() / 256; ++b) {
            float amax = 0;
            for (size_t i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(ref[256 * b + i]));
            const float d = amax / 127.0f, id = d > 0 ? 1.0f / d : 0.0f;
            for (size_t i = 0; i < 256; ++i) rq[256 * b + i] = static_cast<int8_t>(std::nearbyint(ref[256 * b + i] * id));
            for (size_t k = 0; k < 8; ++k) rd[8 * b + k] = d;
          }
        DeviceBuffer<float> dx(x.size()), dw(w.size()), dy(x.size());
        DeviceBuffer<int8_t> dq(x.size());
        DeviceBuffer<float2> dds(x.size() / 32);
        upload(dx, x);
        upload(dw, w);
        cudaMemset(dy.p, 0xff, x.size() * 4);
        bool good = ok(cuda::rmsnorm_q8(dy.p, dq.p, dds.p, dx.p, with_norm ? dw.p : nullptr, rows, n, 1e-6f, false,
                                        nullptr, per256),
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
        report(r, good, n == 4096 && rows == 1, per256 ? "rmsnorm_q8 per256" : with_norm ? "rmsnorm_q8" : "quantize_q8",
               "rows " + std::to_string(rows) + " n " + std::to_string(n) + ", codes off " + std::to_string(off), e);
      }
    }
  }
}

}  // namespace bw24::kcheck
