// bw24-kernel-check, the folded norm (cuda::gemv_q8_add_normed and the folded-input launches): the
// output projection that also writes the next norm's int8 input, against the plain add followed by
// rmsnorm_q8, and the products over that input against the same products over rmsnorm_q8's.
#include <memory>

#include "tools/kernel_check/check.h"

namespace bw24::kcheck {
namespace {

constexpr float kEps = 1e-6f;

// A producer's outputs: the residual y, the folded codes / scales and the partial sums of squares.
struct Folded {
  std::vector<float> y, parts;
  std::vector<int8_t> q;
  std::vector<float2> ds;
  bool written = false;
};

}  // namespace

// Producer rows: Qwen3-8B's O projection (Q4_K 4096 x 4096) and downs (Q6_K and Q4_K, 4096 x 12288), each
// with the fold (y bit-equal to the plain add; codes equal to rmsnorm_q8's but where the scaling moved a
// value across a rounding half; scale x 1 / rms from the partial sums within 1e-5 of rmsnorm_q8's), and a
// shape whose grid the fold would change (2048 x 2048: one group a CTA), not taken. Consumer rows, over
// the 4096-row O fold's input against rmsnorm_q8's: Q + K (Q4_K, two segments), V (Q6_K), the gate-up
// with and without its int8 output, within 2e-3 (the ~0.1 % of codes the rounding moved); and a folded
// input to a launch without a folded instance (Q8_0) refused with cudaErrorNotSupported.
void check_gemv_q8_norm_fold(std::mt19937& rng, Result& r) {
  const auto q4k = static_cast<uint32_t>(GgmlType::Q4_K);
  if (!cuda::gemv_q8_streams(q4k, cuda::GemvOut::kAdd) || !cuda::gemv_q8_norm_fold_on()) {
    std::printf("SKIPPED gemv_q8_norm_fold: the streamed kernel or the fold is off, or the device is not sm_90\n");
    return;
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  // rows x cols of `type` with a random int8 input and residual: the plain add + rmsnorm_q8 (ref) and the fold.
  auto produce = [&](GgmlType t, int64_t rows, int64_t cols, const std::vector<float>& nw, Folded* ref, Folded* fold) {
    const auto type = static_cast<uint32_t>(t);
    std::vector<uint8_t> w_file;
    const loaders::TensorInfo tw = random_weights(rng, t, rows, cols, w_file);
    DeviceBuffer<uint8_t> dw(w_file.size());
    upload_weights(dw, tw);
    std::vector<float> x(static_cast<size_t>(cols)), y0(static_cast<size_t>(rows));
    for (auto& v : x) v = nd(rng);
    for (auto& v : y0) v = 4.0f * nd(rng);
    const size_t n = static_cast<size_t>(rows);
    DeviceBuffer<float> dx(x.size()), dy(n), dy2(n), dnw(n), dparts(n / 16);
    DeviceBuffer<int8_t> dxq(x.size()), dq(n), dq2(n);
    DeviceBuffer<float2> dxds(x.size() / 32), dds(n / 32), dds2(n / 32);
    upload(dx, x);
    upload(dy, y0);
    upload(dy2, y0);
    upload(dnw, nw);
    const cuda::NormOut out{dnw.p, false, dq2.p, dds2.p, dparts.p};
    const bool good =
        ok(cuda::rmsnorm_q8(nullptr, dxq.p, dxds.p, dx.p, nullptr, 1, static_cast<int>(cols), 0.0f, false, nullptr),
           "rmsnorm_q8 (input)") &&
        ok(cuda::gemv_q8(dw.p, nullptr, type, rows, cols, {dxq.p, dxds.p}, 1, dy.p, cuda::GemvOut::kAdd, 0, nullptr),
           "gemv_q8 add") &&
        ok(cuda::rmsnorm_q8(nullptr, dq.p, dds.p, dy.p, dnw.p, 1, static_cast<int>(rows), kEps, false, nullptr),
           "rmsnorm_q8 (the norm)") &&
        ok(cuda::gemv_q8_add_normed(dw.p, type, rows, cols, {dxq.p, dxds.p}, dy2.p, out, nullptr, nullptr,
                                    &fold->written),
           "gemv_q8_add_normed") &&
        ok(cudaDeviceSynchronize(), "sync");
    ref->y = download(dy, n), fold->y = download(dy2, n);
    ref->q = download(dq, n), fold->q = download(dq2, n);
    ref->ds = download(dds, n / 32), fold->ds = download(dds2, n / 32);
    fold->parts = download(dparts, n / 16);
    return good;
  };
  Folded o_ref, o_fold;  // the O projection's, the consumers' input below
  struct Shape {
    GgmlType type;
    int64_t rows, cols;
  };
  for (const Shape c : {Shape{GgmlType::Q4_K, 4096, 4096}, Shape{GgmlType::Q6_K, 4096, 12288},
                        Shape{GgmlType::Q4_K, 4096, 12288}, Shape{GgmlType::Q4_K, 2048, 2048}}) {
    std::vector<float> nw(static_cast<size_t>(c.rows));
    for (auto& v : nw) v = 1.0f + 0.3f * nd(rng);
    Folded ref, fold;
    bool good = produce(c.type, c.rows, c.cols, nw, &ref, &fold);
    const bool want = c.rows != 2048;
    int64_t y_differ = 0, codes_off = 0, codes_moved = 0, scales_off = 0;
    for (size_t i = 0; i < ref.y.size(); ++i) y_differ += std::memcmp(&ref.y[i], &fold.y[i], 4) != 0;
    double ss = 0, parts = 0;
    for (const float v : ref.y) ss += double(v) * v;
    for (const float p : fold.parts) parts += p;
    const double parts_err = std::fabs(parts - ss) / ss;
    if (fold.written) {
      const double inv = 1.0 / std::sqrt(parts / double(c.rows) + kEps);
      for (size_t i = 0; i < ref.q.size(); ++i) {
        if (ref.q[i] == fold.q[i]) continue;
        // |v / d| sits within rounding distance of a half step: the two scalings may round it either way
        const double step = double(ref.y[i]) * nw[i] * inv / ref.ds[i / 32].x;
        if (std::abs(ref.q[i] - fold.q[i]) > 1 || std::fabs(std::fabs(step - std::trunc(step)) - 0.5) > 1e-3)
          ++codes_off;
        else
          ++codes_moved;
      }
      for (size_t b = 0; b < ref.ds.size(); ++b) {
        int sum = 0;
        for (int i = 0; i < 32; ++i) sum += fold.q[32 * b + i];
        const double d = fold.ds[b].x * inv;
        if (!(std::fabs(d - ref.ds[b].x) <= 1e-5 * ref.ds[b].x) ||
            !(std::fabs(fold.ds[b].y - double(fold.ds[b].x) * sum) <= 1e-5 * std::fabs(double(fold.ds[b].x) * sum)))
          ++scales_off;
      }
    }
    good = good && fold.written == want && y_differ == 0 && codes_off == 0 && scales_off == 0 &&
           (!want || parts_err < 1e-5);
    report(r, good, true, "gemv_q8_add_normed",
           std::string(type_info(static_cast<uint32_t>(c.type))->name) + " " + std::to_string(c.rows) + " x " +
               std::to_string(c.cols) + ": written " + (fold.written ? "yes" : "no") + " (expected " +
               (want ? "yes" : "no") + "), y not bit-equal " + std::to_string(y_differ) + ", codes off " +
               std::to_string(codes_off) + " (moved by a half step " + std::to_string(codes_moved) + "), scales off " +
               std::to_string(scales_off),
           want ? parts_err : 0.0);
    if (c.type == GgmlType::Q4_K && c.rows == 4096 && c.cols == 4096) o_ref = ref, o_fold = fold;
  }
  if (!o_fold.written) return;

  // The consumers, over the O fold's input (cols = 4096) against rmsnorm_q8's.
  const int64_t cols = 4096;
  DeviceBuffer<int8_t> dq_ref{size_t(cols)}, dq_fold{size_t(cols)};
  DeviceBuffer<float2> dds_ref{size_t(cols / 32)}, dds_fold{size_t(cols / 32)};
  DeviceBuffer<float> dparts{size_t(cols / 16)};
  upload(dq_ref, o_ref.q);
  upload(dq_fold, o_fold.q);
  upload(dds_ref, o_ref.ds);
  upload(dds_fold, o_fold.ds);
  upload(dparts, o_fold.parts);
  const cuda::ActQ8 in_ref{dq_ref.p, dds_ref.p};
  cuda::ActQ8 in_fold{dq_fold.p, dds_fold.p};
  in_fold.norm_parts = dparts.p;
  in_fold.n_parts = static_cast<int>(cols / 16);
  in_fold.norm_eps = kEps;
  auto weights = [&](GgmlType t, int64_t rows) {
    std::vector<uint8_t> file;
    const loaders::TensorInfo tw = random_weights(rng, t, rows, cols, file);
    auto d = std::make_unique<DeviceBuffer<uint8_t>>(file.size());
    upload_weights(*d, tw);
    return d;
  };
  // Q + K (Q4_K, 4096 + 1024 rows: kWhole) and V (Q6_K, 1024 rows: kOne).
  {
    const auto wq = weights(GgmlType::Q4_K, 4096), wk = weights(GgmlType::Q4_K, 1024), wv = weights(GgmlType::Q6_K, 1024);
    DeviceBuffer<float> y_ref(4096 + 1024 + 1024), y_fold(4096 + 1024 + 1024);
    auto qkv = [&](const cuda::ActQ8& in, float* y) {
      const cuda::GemvSegment qk[2] = {{wq->p, y, 4096}, {wk->p, y + 4096, 1024}};
      const cuda::GemvSegment v[1] = {{wv->p, y + 5120, 1024}};
      return ok(cuda::gemv_q8_multi(qk, 2, nullptr, q4k, cols, in, 1, cuda::GemvOut::kStore, 0, nullptr), "Q + K") &&
             ok(cuda::gemv_q8_multi(v, 1, nullptr, static_cast<uint32_t>(GgmlType::Q6_K), cols, in, 1,
                                    cuda::GemvOut::kStore, 0, nullptr),
                "V");
    };
    const bool good = qkv(in_ref, y_ref.p) && qkv(in_fold, y_fold.p) && ok(cudaDeviceSynchronize(), "sync");
    const std::vector<float> a = download(y_fold, 6144), b = download(y_ref, 6144);
    const double e_qk = nerr(std::vector<float>(a.begin(), a.begin() + 5120), std::vector<float>(b.begin(), b.begin() + 5120));
    const double e_v = nerr(std::vector<float>(a.begin() + 5120, a.end()), std::vector<float>(b.begin() + 5120, b.end()));
    report(r, good && e_qk < 2e-3, true, "gemv_q8 folded input", "Q4_K Q + K 4096 + 1024 x 4096 (kWhole)", e_qk);
    report(r, good && e_v < 2e-3, true, "gemv_q8 folded input", "Q6_K V 1024 x 4096 (kOne)", e_v);
  }
  // The gate-up (Q4_K 12,288 x 4096): with its int8 output (the kQ8 instance) and without.
  {
    const int64_t rows = 12288;
    const auto wg = weights(GgmlType::Q4_K, rows), wu = weights(GgmlType::Q4_K, rows);
    DeviceBuffer<float> y_ref{size_t(rows)}, y_fold{size_t(rows)}, y_plain{size_t(rows)};
    DeviceBuffer<int8_t> q_ref{size_t(rows)}, q_fold{size_t(rows)};
    DeviceBuffer<float2> ds_ref{size_t(rows / 32)}, ds_fold{size_t(rows / 32)};
    bool w_ref = false, w_fold = false;
    const bool good =
        ok(cuda::gemv_q8_gate_up_q8(wg->p, wu->p, q4k, rows, cols, in_ref, y_ref.p, 0, q_ref.p, ds_ref.p, nullptr, &w_ref),
           "gate-up (rmsnorm_q8's input)") &&
        ok(cuda::gemv_q8_gate_up_q8(wg->p, wu->p, q4k, rows, cols, in_fold, y_fold.p, 0, q_fold.p, ds_fold.p, nullptr,
                                    &w_fold),
           "gate-up (folded input)") &&
        ok(cuda::gemv_q8(wg->p, wu->p, q4k, rows, cols, in_fold, 1, y_plain.p, cuda::GemvOut::kGateUp, 0, nullptr),
           "gate-up without its int8 output (folded input)") &&
        ok(cudaDeviceSynchronize(), "sync");
    const std::vector<float> a = download(y_fold, size_t(rows)), b = download(y_ref, size_t(rows)),
                             c = download(y_plain, size_t(rows));
    const std::vector<int8_t> qa = download(q_fold, size_t(rows)), qb = download(q_ref, size_t(rows));
    int64_t codes_far = 0;  // codes more than one step apart
    for (size_t i = 0; i < qa.size(); ++i) codes_far += std::abs(qa[i] - qb[i]) > 1;
    const double e = nerr(a, b), e_plain = nerr(c, b);
    report(r, good && w_ref && w_fold && e < 2e-3 && codes_far == 0, true, "gemv_q8_gate_up_q8 folded input",
           "Q4_K 12288 x 4096: written " + std::string(w_fold ? "yes" : "no") + ", codes more than a step apart " +
               std::to_string(codes_far),
           e);
    report(r, good && e_plain < 2e-3, true, "gemv_q8 folded input", "Q4_K gate-up 12288 x 4096", e_plain);
  }
  // A folded input where no folded instance exists: refused, not read as a plain one.
  {
    const auto w8 = weights(GgmlType::Q8_0, 256);
    DeviceBuffer<float> y(256);
    const cudaError_t e = cuda::gemv_q8(w8->p, nullptr, static_cast<uint32_t>(GgmlType::Q8_0), 256, cols, in_fold, 1,
                                        y.p, cuda::GemvOut::kStore, 0, nullptr);
    cudaGetLastError();
    report(r, e == cudaErrorNotSupported && !cuda::gemv_q8_takes_folded(static_cast<uint32_t>(GgmlType::Q8_0),
                                                                         cuda::GemvOut::kStore, 256, cols),
           true, "gemv_q8 folded input", std::string("Q8_0 256 x 4096: ") + cudaGetErrorString(e) + " (expected " +
                                             cudaGetErrorString(cudaErrorNotSupported) + ")",
           0.0);
  }
}

}  // namespace bw24::kcheck
