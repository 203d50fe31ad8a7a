// bw24-kernel-check, the prefill GEMM family: bf16 expansion, the GEMM over its tile
// configurations, multi-segment launches, the grouped expert GEMM and its fused expansion.
#include "tools/kernel_check/check.h"

namespace bw24::kcheck {
namespace {

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

}  // namespace

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

// The decode step's embedding gather (cuda::embed_token) against the host's (lib/ref dequant_row
// times the scale): bit-equal rows in every format, with and without a scale, for tokens inside and
// outside the table (row 0); a held step's logits copy (hold = 1: logits_keep = logits, bit-equal;
// hold = 0: logits_keep untouched).
void check_embed(std::mt19937& rng, Result& r) {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                     GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS}) {
    for (int64_t cols : {256, 4096, 5120}) {
      const int64_t rows = 37, n_logits = 1000;
      std::vector<uint8_t> wq;
      loaders::TensorInfo ti = random_weights(rng, t, rows, cols, wq);
      DeviceBuffer<uint8_t> dw(wq.size() + 16);
      upload_weights(dw, ti);
      DeviceBuffer<float> dout(static_cast<size_t>(cols)), dlogits(static_cast<size_t>(n_logits)),
          dkeep(static_cast<size_t>(n_logits));
      DeviceBuffer<int32_t> dtok(1), dhold(1);
      std::vector<float> logits(static_cast<size_t>(n_logits));
      std::normal_distribution<float> nd(0.0f, 1.0f);
      for (auto& v : logits) v = nd(rng);
      upload(dlogits, logits);
      bool good = cuda::embed_supports(ti.type, cols);
      int mismatched = 0;
      for (const float scale : {1.0f, 45.254834f})
        for (const int32_t tok : {0, 5, 36, -1, 37}) {
          for (const int32_t hold : {0, 1}) {
            upload(dtok, std::vector<int32_t>{tok});
            upload(dhold, std::vector<int32_t>{hold});
            cudaMemset(dkeep.p, 0, size_t(n_logits) * 4);
            const cuda::EmbedArgs a{dout.p, dw.p, ti.type, rows, cols, scale, dtok.p, dhold.p, dlogits.p, dkeep.p, n_logits};
            good = good && ok(cuda::embed_token(a, nullptr), "embed_token") && ok(cudaDeviceSynchronize(), "embed sync");
            std::vector<float> want(static_cast<size_t>(cols));
            ref::dequant_row(ti, tok < 0 || tok >= rows ? 0 : tok, want.data());
            if (scale != 1.0f)
              for (auto& v : want) v *= scale;
            mismatched += !same_bits(download(dout, size_t(cols)), want);
            const std::vector<float> keep = download(dkeep, size_t(n_logits));
            mismatched += !same_bits(keep, hold ? logits : std::vector<float>(static_cast<size_t>(n_logits), 0.0f));
          }
        }
      good = good && mismatched == 0;
      report(r, good, cols == 4096, fmt_name("embed_token", t, ""), shape(rows, cols, 0), mismatched);
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
      if (!cuda::gemm_bf16_config_runs(config, c.k)) continue;  // wgmma entries off sm_90
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

// The grouped GEMM over int8 activations (Q4_K and Q6_K stacks read as quantized, gemm_grouped_q8) against
// an f64 matmul of lib/ref's dequantized weights with the int8 activations times their block
// scales (rmsnorm_q8's quantization, read back): the gate-up form (A row = pair / k, C in sorted
// order) and the down form (A in sorted order, C scattered to pair order), every expert in one
// launch, two token tiles per expert, a tail tile in N. Only the f32 order of the per-sub-block
// scaled sums differs from the reference (error as check_gemm).
static void check_gemm_grouped_q8_type(std::mt19937& rng, Result& r, GgmlType t) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int X = 5, k = 2, n_tok = 200, pairs = n_tok * k;
  const int64_t N = 136, K = 512;
  const uint32_t type = static_cast<uint32_t>(t);
  std::vector<int32_t> ids(static_cast<size_t>(pairs));
  for (int p = 0; p < pairs; p += 2) {
    ids[size_t(p)] = static_cast<int32_t>(rng() % X);
    ids[size_t(p + 1)] = (ids[size_t(p)] + 1 + static_cast<int32_t>(rng() % (X - 1))) % X;
  }
  std::vector<std::vector<uint8_t>> files(X);
  std::vector<float> wd(size_t(X * N * K));  // the experts dequantized by lib/ref
  std::vector<uint8_t> stack;
  for (int e = 0; e < X; ++e) {
    const loaders::TensorInfo ti = random_weights(rng, t, N, K, files[size_t(e)]);
    for (int64_t n = 0; n < N; ++n) ref::dequant_row(ti, n, &wd[size_t((e * N + n) * K)]);
    const std::vector<uint8_t> one = native_bytes(ti);
    stack.insert(stack.end(), one.begin(), one.end());
  }
  const int64_t slice = static_cast<int64_t>(stack.size()) / X;  // 16-byte aligned for both types at 136 x 512
  stack.resize(stack.size() + 16);  // the last Q6_K block's d window (DeviceWeights::upload's slack)
  DeviceBuffer<uint8_t> dstack(stack.size());
  DeviceBuffer<int32_t> dids(ids.size()), dsorted(ids.size()), doff(X + 1), dts(X + 1);
  DeviceBuffer<int2> dtiles(size_t(pairs / cuda::kGemmGroupRows + X));
  upload(dstack, stack);
  upload(dids, ids);
  bool good = ok(cuda::moe_group(dsorted.p, doff.p, dts.p, dtiles.p, dids.p, pairs, X, cuda::kGemmGroupRows, nullptr),
                 "moe_group") &&
              ok(cudaDeviceSynchronize(), "moe_group sync");
  const std::vector<int32_t> sorted = download(dsorted, ids.size());
  // per256: activations with one scale a 256 columns (rmsnorm_q8's per256): the superblock-wide
  // kernel (Q8sQ4K / Q8sQ6K); otherwise the per-sub-block one.
  for (bool per256 : {false, true})
  for (bool down : {false, true}) {
    const int a_rows = down ? pairs : n_tok;
    std::vector<float> a(size_t(a_rows * K));
    for (auto& v : a) v = nd(rng);
    DeviceBuffer<float> da(a.size()), dy(size_t(pairs * N));
    DeviceBuffer<int8_t> dq(a.size());
    DeviceBuffer<float2> dds(a.size() / 32);
    upload(da, a);
    cudaMemset(dy.p, 0xff, size_t(pairs * N) * 4);
    const cuda::GemmSegment seg{dstack.p, dy.p, N, N, slice};
    const cuda::GemmGroups g{dsorted.p, doff.p, dts.p, dtiles.p, 0, X, down ? 0 : k, down};
    bool run_ok = good &&
                  ok(cuda::rmsnorm_q8(nullptr, dq.p, dds.p, da.p, nullptr, a_rows, static_cast<int>(K), 0.0f, false,
                                      nullptr, per256),
                     "rmsnorm_q8") &&
                  ok(cuda::gemm_grouped_q8({dq.p, dds.p, per256}, &seg, 1, type, g, pairs, K, cuda::GemvOut::kStore,
                                           nullptr),
                     "gemm_grouped_q8") &&
                  ok(cudaDeviceSynchronize(), "gemm_grouped_q8 sync");
    const std::vector<int8_t> q = download(dq, a.size());
    const std::vector<float2> ds = download(dds, a.size() / 32);
    const std::vector<float> y = download(dy, size_t(pairs * N));
    double worst = 0;
    for (int s = 0; s < pairs; ++s) {  // sorted row s: pair sorted[s] of expert ids[sorted[s]]
      const int p = sorted[size_t(s)], e = ids[size_t(p)];
      const int64_t arow = down ? s : p / k, crow = down ? p : s;
      for (int64_t n = 0; n < N; ++n) {
        double sum = 0, mag = 0;
        for (int64_t kk = 0; kk < K; ++kk) {
          const double t = double(wd[size_t((e * N + n) * K + kk)]) * ds[size_t((arow * K + kk) / 32)].x *
                           q[size_t(arow * K + kk)];
          sum += t;
          mag += std::fabs(t);
        }
        const double v = y[size_t(crow * N + n)];
        worst = std::max(worst, std::isfinite(v) ? std::fabs(v - sum) / std::max(mag, 1e-30) : INFINITY);
      }
    }
    report(r, run_ok && worst < 1e-5, true,
           fmt_name(down ? "gemm_grouped_q8 down" : "gemm_grouped_q8 gate-up", t, per256 ? "per256" : ""),
           std::to_string(pairs) + " pairs x 136 x 512, 5 experts", worst);
  }
}

void check_gemm_grouped_q8(std::mt19937& rng, Result& r) {
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K}) check_gemm_grouped_q8_type(rng, r, t);
}

}  // namespace bw24::kcheck
