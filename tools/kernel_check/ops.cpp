// bw24-kernel-check, token selection (argmax, top-k sampling), the gated elementwise ops, the gated
// delta net and MoE routing / routed GEMVs / combine.
#include <tuple>

#include "tools/kernel_check/check.h"

namespace bw24::kcheck {
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
  // StepNext (run-ahead decoding): the choice also writes the next step's position and the hold
  // flag, set where the choice is one of the stops; both kernels (one CTA, the cluster).
  for (int n : {1000, 151936}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = nd(rng);
    const int32_t want = sampling::argmax(x.data(), n);
    DeviceBuffer<float> dx(x.size());
    DeviceBuffer<int32_t> dout(1), dhold(1);
    DeviceBuffer<int64_t> dpos(1);
    upload(dx, x);
    for (const bool stop : {false, true}) {
      cuda::StepNext next;
      next.pos = dpos.p;
      next.pos_value = 4321 + n;
      next.hold = dhold.p;
      next.n_stops = 3;
      for (int i = 0; i < 3; ++i) next.stops[i] = (want + 1 + i) % n;  // none is the choice
      if (stop) next.stops[1] = want;
      upload(dhold, std::vector<int32_t>{stop ? 0 : 1});
      int32_t* pinned = nullptr;  // the host slot the choice is stored to as well (run-ahead's ring)
      bool good = ok(cudaMallocHost(&pinned, sizeof(int32_t)), "pinned slot");
      if (good) *pinned = -1;
      next.host_choice = pinned;
      good = good && ok(cuda::argmax(dout.p, dx.p, n, nullptr, next), "argmax") && ok(cudaDeviceSynchronize(), "sync");
      const bool right = download(dout, 1)[0] == want && download(dpos, 1)[0] == 4321 + n &&
                         download(dhold, 1)[0] == (stop ? 1 : 0) && pinned && *pinned == want;
      cudaFreeHost(pinned);
      good = good && right;
      report(r, good, false, "argmax StepNext", std::to_string(n) + (stop ? " stop" : " no stop"), right ? 0.0 : 1.0);
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
      if (trial == 0) {  // StepNext: the choice is a stop, so the hold flag is set, and the position
        DeviceBuffer<int32_t> dhold(1);
        DeviceBuffer<int64_t> dpos(1);
        upload(dhold, std::vector<int32_t>{0});
        cuda::StepNext next;
        next.pos = dpos.p;
        next.pos_value = 77;
        next.hold = dhold.p;
        next.n_stops = 2;
        next.stops[0] = (want + 1) % c.n;
        next.stops[1] = want;
        good = good && ok(cuda::sample_top_k(dout.p, dx.p, c.n, dp, u, nullptr, next), "sample_top_k") &&
               ok(cudaDeviceSynchronize(), "sample sync");
        mismatches += download(dout, 1)[0] != want || download(dpos, 1)[0] != 77 || download(dhold, 1)[0] != 1;
      }
    }
    char shape_s[128];
    std::snprintf(shape_s, sizeof shape_s, "%d top-k %d T %g top-p %g min-p %g%s, %d draws", c.n, c.top_k,
                  c.temperature, c.top_p, c.min_p, c.ties ? " ties" : "", kTrials);
    report(r, good && mismatches == 0, true, "sample_top_k", shape_s, mismatches);
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

// The MLP's gated activation (SiLU, tanh GELU) into f32 and bf16 against lib/ref: n % 4 == 0 with
// aligned pointers takes the four-a-thread kernel, an odd n or an offset pointer the scalar one.
void check_gated_act(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (const int64_t n : {int64_t{512} * 1024, int64_t{1001}}) for (const int off : {0, 1}) for (const int act : {0, 1}) {
    std::vector<float> gate(static_cast<size_t>(n) + 1), up(gate.size()), y(static_cast<size_t>(n));
    for (auto* v : {&gate, &up})
      for (auto& x : *v) x = nd(rng);
    (act == 0 ? ref::silu_mul : ref::gelu_tanh_mul)(y.data(), gate.data() + off, up.data() + off, n);
    DeviceBuffer<float> dg(gate.size()), du(up.size()), dy(y.size());
    DeviceBuffer<__nv_bfloat16> db(y.size());
    upload(dg, gate);
    upload(du, up);
    bool good = ok(cuda::gated_act(dy.p, dg.p + off, du.p + off, n, act, nullptr), "gated_act") &&
                ok(cuda::gated_act_bf16(db.p, dg.p + off, du.p + off, n, act, nullptr), "gated_act_bf16") &&
                ok(cudaDeviceSynchronize(), "gated_act sync");
    const std::vector<float> gy = download(dy, y.size());
    std::vector<__nv_bfloat16> gb(y.size());
    good = good && ok(cudaMemcpy(gb.data(), db.p, gb.size() * sizeof(gb[0]), cudaMemcpyDeviceToHost), "download");
    std::vector<float> gbf(gb.size()), rb(y.size());
    for (size_t i = 0; i < gb.size(); ++i) {
      gbf[i] = __bfloat162float(gb[i]);
      rb[i] = __bfloat162float(__float2bfloat16_rn(gy[i]));  // the f32 result rounded as the kernel rounds
    }
    const double e = nerr(gy, y), eb = nerr(gbf, rb);
    const std::string shape = std::to_string(n) + (off ? " offset" : "") + (act ? " gelu" : " silu");
    report(r, good && e < 1e-6, true, "gated_act f32", shape, e);
    report(r, good && eb == 0.0, true, "gated_act bf16 (= f32 rounded)", shape, eb);
  }
}

// gdn_decode (conv, recurrence and the out_proj's int8 input in one launch) against the launches it
// replaces: gdn_conv (into d_y = a.y) + gdn_step (a, whose state and out the caller's first call
// advanced) and rmsnorm_q8 without a norm, each path called twice in a row from the same start (S0
// transposed, cs0), so the second fused call reuses the turn counters the first left at zero. Every
// output the same bits; shapes it does not take are refused. The calls are a pass apart (a
// synchronize between them, as the runner's passes start with a copy): gdn_decode reads the states
// before its PDL wait, so a call launched right behind the previous one would read them early.
void check_gdn_decode(Result& r, cuda::GdnStepArgs a, int Hk, int K, float q_scale, int n, const std::string& shape_s,
                      float* d_y, const float* d_in, const float* d_taps, const std::vector<float>& S0,
                      const std::vector<float>& cs0) {
  const int64_t C = 2 * int64_t{Hk} * a.dk + int64_t{a.Hv} * a.dv, Vd = int64_t{a.Hv} * a.dv;
  const size_t n_out = size_t(n * Vd);
  DeviceBuffer<float> f_S(S0.size()), f_cs(cs0.size()), f_out(n_out);
  DeviceBuffer<unsigned> turn{size_t(Hk)};
  DeviceBuffer<int8_t> q_ref(n_out), q_f(n_out);
  DeviceBuffer<float2> ds_ref(n_out / 32), ds_f(n_out / 32);
  upload(f_S, S0);
  upload(f_cs, cs0);
  cudaMemset(turn.p, 0, size_t(Hk) * sizeof(unsigned));
  cudaMemset(f_out.p, 0xff, n_out * 4);
  cuda::GdnDecodeArgs f{a, d_in, f_cs.p, d_taps, K, q_scale, turn.p, q_f.p, ds_f.p};
  f.step.out = f_out.p;
  f.step.state = f_S.p;
  if (!cuda::gdn_decode_supports(n, Hk, a.Hv, a.dk, a.dv, K)) {
    const bool refused = cuda::gdn_decode(f, n, nullptr) == cudaErrorInvalidValue;
    report(r, refused, true, "gdn_decode refuses", shape_s, refused ? 0.0 : 1.0);
    return;
  }
  // The caller's state buffers (a.state; the conv state is not in a) hold the first call's result.
  DeviceBuffer<float> cs_ref(cs0.size());
  upload(cs_ref, cs0);
  bool good = ok(cuda::gdn_conv(d_y, cs_ref.p, d_in, d_taps, n, C, K, Hk, a.dk, q_scale, nullptr), "gdn_conv") &&
              ok(cuda::gdn_conv(d_y, cs_ref.p, d_in, d_taps, n, C, K, Hk, a.dk, q_scale, nullptr), "gdn_conv") &&
              ok(cuda::gdn_step(a, n, nullptr), "gdn_step") &&
              ok(cuda::rmsnorm_q8(nullptr, q_ref.p, ds_ref.p, a.out, nullptr, n, static_cast<int>(Vd), 1e-6f, false, nullptr),
                 "rmsnorm_q8") &&
              ok(cuda::gdn_decode(f, n, nullptr), "gdn_decode") && ok(cudaDeviceSynchronize(), "gdn_decode sync") &&
              ok(cuda::gdn_decode(f, n, nullptr), "gdn_decode") && ok(cudaDeviceSynchronize(), "gdn_decode sync");
  const std::vector<unsigned> turns = download(turn, size_t(Hk));
  const std::vector<float> out_f = download(f_out, n_out), out_r = download(static_cast<const float*>(a.out), n_out);
  const bool parts[6] = {same_bits(out_f, out_r),
                         same_bits(download(f_S, S0.size()), download(static_cast<const float*>(a.state), S0.size())),
                         same_bits(download(f_cs, cs0.size()), download(cs_ref, cs0.size())),
                         same_bits(download(q_f, n_out), download(q_ref, n_out)),
                         same_bits(download(ds_f, n_out / 32), download(ds_ref, n_out / 32)),
                         std::all_of(turns.begin(), turns.end(), [](unsigned t) { return t == 0; })};
  const bool equal = std::all_of(std::begin(parts), std::end(parts), [](bool b) { return b; });
  if (!equal)  // which output differs: out, state, conv history, q8, ds, counters (1 = the same bits)
    std::printf("  gdn_decode outputs equal: out %d S %d conv %d q8 %d ds %d turn %d; out error %.2e\n", parts[0],
                parts[1], parts[2], parts[3], parts[4], parts[5], nerr(out_f, out_r));
  report(r, good && equal, true, "gdn_decode (= conv + step + int8 input, bits)", shape_s, nerr(out_f, out_r));
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
      const bool chunked = n >= cuda::kGdnChunkedFrom;  // reported under its own name (a host emulation: <= 1.3e-6)
      report(r, good && std::max(e_y, e_cs) < 1e-5, true, "gdn_conv", shape_s, std::max(e_y, e_cs));
      report(r, good && std::max(e_out, e_S) < 1e-5, true, chunked ? "gdn_chunked" : "gdn_step",
             shape_s, std::max(e_out, e_S));
      if (!chunked) check_gdn_decode(r, a, c.Hk, c.K, q_scale, n, shape_s, d_y.p, d_in.p, d_taps.p, transpose(S), cstate);
    }
  }
}

namespace {

// The CPU reference's routing of n tokens' X logits: softmax, the top k (ties to the lower id) in
// descending order, their p divided by the k's sum when renorm.
void route_ref(const std::vector<float>& logits, int n, int X, int k, bool renorm, std::vector<int32_t>& ids,
               std::vector<float>& w) {
  ids.assign(size_t(n) * k, 0);
  w.assign(ids.size(), 0.0f);
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
      ids[size_t(t * k + j)] = order[size_t(j)];
      w[size_t(t * k + j)] = renorm ? p[order[size_t(j)]] / sum : p[order[size_t(j)]];
    }
  }
}

// moe_gate (router product and routing in one launch) for the float router types: its logits
// against a double-precision product (error over sum |w x|, as the GEMV checks), its ids exactly
// and weights within fp32 rounding against route_ref over the logits it computed. Each case runs
// twice on one counter: the second launch proves the last CTA set it back to zero. 8,448 columns:
// rows past the run of loads a thread issues before the wait (4,096 F32 or 8,192 F16 / BF16 columns).
void check_moe_gate(std::mt19937& rng, Result& r) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  DeviceBuffer<unsigned> counter(1);
  cudaMemset(counter.p, 0, sizeof(unsigned));
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    for (int X : {128, 512}) {
      for (int64_t cols : {int64_t{512}, int64_t{2048}, int64_t{8448}}) {
        for (int n : {1, 3, 8}) {
          const int k = X == 128 ? 8 : 10;
          const bool renorm = n != 3;
          std::vector<uint8_t> wq;
          const loaders::TensorInfo ti = random_weights(rng, t, X, cols, wq);
          std::vector<float> x(size_t(n * cols));
          for (auto& v : x) v = nd(rng);
          std::vector<double> ref_logits(size_t(n) * X), scale(ref_logits.size());
          std::vector<float> row(static_cast<size_t>(cols));
          for (int e = 0; e < X; ++e) {
            ref::dequant_row(ti, e, row.data());
            for (int tok = 0; tok < n; ++tok) {
              double sum = 0, mag = 0;
              for (int64_t c = 0; c < cols; ++c) {
                const double v = double(row[size_t(c)]) * x[size_t(tok * cols + c)];
                sum += v;
                mag += std::fabs(v);
              }
              ref_logits[size_t(tok * X + e)] = sum;
              scale[size_t(tok * X + e)] = mag;
            }
          }
          DeviceBuffer<uint8_t> dw(wq.size());
          DeviceBuffer<float> dx(x.size()), dl(size_t(n) * X), dwt(size_t(n) * k);
          DeviceBuffer<int32_t> di(size_t(n) * k);
          upload_weights(dw, ti);
          upload(dx, x);
          bool good = true, same = true;
          double e_logit = 0, e_w = 0;
          std::vector<int32_t> first_ids;
          for (int call = 0; call < 2; ++call) {
            good = good && ok(cuda::moe_gate(di.p, dwt.p, dl.p, counter.p, dw.p, ti.type, dx.p, n, X, cols, k, renorm,
                                             nullptr),
                              "moe_gate") &&
                   ok(cudaDeviceSynchronize(), "moe_gate sync");
            const std::vector<float> logits = download(dl, size_t(n) * X);
            for (size_t i = 0; i < logits.size(); ++i)
              e_logit = std::max(e_logit, std::isfinite(logits[i])
                                              ? std::fabs(logits[i] - ref_logits[i]) / std::max(scale[i], 1e-30)
                                              : INFINITY);
            std::vector<int32_t> ids_ref;
            std::vector<float> w_ref;
            route_ref(logits, n, X, k, renorm, ids_ref, w_ref);
            const std::vector<int32_t> ids = download(di, ids_ref.size());
            same = same && ids == ids_ref && (call == 0 || ids == first_ids);
            first_ids = ids;
            e_w = std::max(e_w, nerr(download(dwt, w_ref.size()), w_ref));
          }
          char w_err[32];
          std::snprintf(w_err, sizeof w_err, "%.1e", e_w);
          report(r, good && same && e_logit < 1e-5 && e_w < 1e-6, X == 128 && cols == 2048,
                 fmt_name("moe_gate", t, ""),
                 std::to_string(X) + " x " + std::to_string(cols) + ", " + std::to_string(n) + " tok, top " +
                     std::to_string(k) + (renorm ? " renorm" : "") + ", twice" + (same ? "" : ", ids differ") +
                     ", weights err " + w_err,
                 e_logit);
        }
      }
    }
  }
  // The cluster router (moe_gate_set_cluster): one token of a 2,048-wide F32 router of 128 or 256
  // experts, its logits, ids and weights bit-equal to gate_kernel's (whose warp_route the cluster's
  // cta_route must reproduce), and the cluster kernel taken. Ties: "pairs" makes rows 2j and 2j + 1
  // equal (every logit tied with a neighbour's); "x1000" scales the input so that all but the largest
  // probability underflow to exact zeros (the later picks are ties at 0, by id), "x30" most of them.
  // All but the "cluster barrier" rows hand the logits to CTA 0 one way (moe_gate_set_one_way).
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major != 9) std::printf("SKIPPED moe_gate cluster: the cluster router is built for sm_90 only\n");
  for (int X : {128, 256}) {
    if (major != 9) break;
    for (int variant = 0; variant < 10; ++variant) {
      // variants 8 and 9: the logits handed to CTA 0 through the cluster barrier (moe_gate_set_one_way off)
      const bool one_way = variant < 8;
      const bool renorm = variant % 2 == 0;
      const char* kind = variant < 2   ? ""
                         : variant < 4 ? ", pairs"
                         : variant < 6 ? ", x1000"
                         : variant < 8 ? ", x30"
                                       : ", cluster barrier";
      const int64_t cols = 2048;
      const int k = 8;
      std::vector<uint8_t> wq;
      const loaders::TensorInfo ti = random_weights(rng, GgmlType::F32, X, cols, wq);
      if (variant == 2 || variant == 3)
        for (int e = 0; e + 1 < X; e += 2)
          std::copy_n(wq.begin() + int64_t{e} * cols * 4, cols * 4, wq.begin() + int64_t{e + 1} * cols * 4);
      std::vector<float> x(static_cast<size_t>(cols));
      for (auto& v : x) v = (variant == 6 || variant == 7 ? 30.0f : variant == 4 || variant == 5 ? 1000.0f : 1.0f) * nd(rng);
      DeviceBuffer<uint8_t> dw(wq.size());
      DeviceBuffer<float> dx(x.size()), dl(static_cast<size_t>(X)), dwt(static_cast<size_t>(k));
      DeviceBuffer<int32_t> di(static_cast<size_t>(k));
      upload_weights(dw, ti);
      upload(dx, x);
      std::vector<float> logits[2], wts[2];
      std::vector<int32_t> ids[2];
      bool good = true;
      const bool was = cuda::moe_gate_cluster(), was_one_way = cuda::moe_gate_one_way();
      cuda::moe_gate_set_one_way(one_way);
      const long before = cuda::moe_gate_cluster_launches();
      for (int cl = 0; cl < 2; ++cl) {
        cuda::moe_gate_set_cluster(cl == 1);
        good = good && ok(cuda::moe_gate(di.p, dwt.p, dl.p, counter.p, dw.p, ti.type, dx.p, 1, X, cols, k, renorm, nullptr),
                          "moe_gate") &&
               ok(cudaDeviceSynchronize(), "moe_gate sync");
        logits[cl] = download(dl, static_cast<size_t>(X));
        wts[cl] = download(dwt, static_cast<size_t>(k));
        ids[cl] = download(di, static_cast<size_t>(k));
      }
      cuda::moe_gate_set_cluster(was);
      cuda::moe_gate_set_one_way(was_one_way);
      const bool taken = cuda::moe_gate_cluster_launches() == before + 1;
      int differ = 0;
      for (int e = 0; e < X; ++e) differ += !(logits[0][size_t(e)] == logits[1][size_t(e)]);
      for (int j = 0; j < k; ++j) differ += !(wts[0][size_t(j)] == wts[1][size_t(j)]);
      const bool same_ids = ids[0] == ids[1];
      report(r, good && taken && differ == 0 && same_ids, true, "moe_gate cluster",
             std::to_string(X) + " x 2048 F32, 1 tok, top 8" + (renorm ? " renorm" : "") + kind +
                 ": cluster kernel " + (taken ? "taken" : "NOT taken") + ", logits and weights not bit-equal " +
                 std::to_string(differ) +
                 (same_ids ? "" : ", ids differ"),
             0.0);
    }
  }
  // moe_gate_room: the cluster router's CTA as the launch before it must leave room for (gemv_q8's
  // CtaRoom): its rows' shared memory and more, its registers within an SM's; none for two tokens.
  for (int X : {128, 256}) {
    if (major != 9) break;
    for (bool norm : {false, true}) {
      cuda::CtaRoom one{}, two{};
      const bool good = ok(cuda::moe_gate_room(static_cast<uint32_t>(GgmlType::F32), 1, X, 2048, 8, norm, &one),
                           "moe_gate_room") &&
                        ok(cuda::moe_gate_room(static_cast<uint32_t>(GgmlType::F32), 2, X, 2048, 8, norm, &two),
                           "moe_gate_room");
      const int64_t rows_bytes = int64_t{X} / 16 * 2048 * 4;  // kRows F32 rows of 2,048 a CTA
      const bool sane = one.smem > rows_bytes && one.smem < 228 * 1024 && one.regs > 0 && one.regs <= 64 * 1024 &&
                        two.smem == 0 && two.regs == 0;
      report(r, good && sane, true, "moe_gate_room",
             std::to_string(X) + " x 2048 F32" + (norm ? " with the norm" : "") + ": one token " +
                 std::to_string(one.smem) + " B, " + std::to_string(one.regs) + " registers; two tokens " +
                 std::to_string(two.smem) + " B",
             0.0);
    }
  }
  // The cluster router with the block's input norm (MoeGateNorm, moe_gate_set_norm_fused): x is the
  // residual; the normed row (f32), its int8 blocks and scales, the logits, ids and weights
  // bit-equal to rmsnorm_q8 then the cluster router, and the fused kernel taken.
  if (major != 9) std::printf("SKIPPED moe_gate norm: the cluster router is built for sm_90 only\n");
  for (int X : {128, 256}) {
    if (major != 9) break;
    for (bool one_plus : {false, true}) {
      const int64_t cols = 2048;
      const int k = 8;
      std::vector<uint8_t> wq;
      const loaders::TensorInfo ti = random_weights(rng, GgmlType::F32, X, cols, wq);
      std::vector<float> x(static_cast<size_t>(cols)), nw(static_cast<size_t>(cols));
      for (auto& v : x) v = 3.0f * nd(rng);
      for (auto& v : nw) v = (one_plus ? 0.0f : 1.0f) + 0.2f * nd(rng);
      DeviceBuffer<uint8_t> dw(wq.size());
      DeviceBuffer<float> dx(x.size()), dnw(nw.size()), dy(x.size()), dl(static_cast<size_t>(X)),
          dwt(static_cast<size_t>(k));
      DeviceBuffer<int8_t> dq(x.size());
      DeviceBuffer<float2> dds(x.size() / 32);
      DeviceBuffer<int32_t> di(static_cast<size_t>(k));
      upload_weights(dw, ti);
      upload(dx, x);
      upload(dnw, nw);
      const cuda::MoeGateNorm nm{dnw.p, 1e-6f, one_plus, dy.p, dq.p, dds.p};
      std::vector<float> logits[2], wts[2], y[2];
      std::vector<float2> ds[2];
      std::vector<int8_t> q[2];
      std::vector<int32_t> ids[2];
      bool good = true;
      const bool was = cuda::moe_gate_norm_fused();
      const long before = cuda::moe_gate_norm_launches();
      for (int fused = 0; fused < 2; ++fused) {
        cuda::moe_gate_set_norm_fused(fused == 1);
        good = good && ok(cudaMemset(dy.p, 0, x.size() * 4), "memset") &&
               ok(cudaMemset(dq.p, 0, x.size()), "memset") &&
               ok(cuda::moe_gate(di.p, dwt.p, dl.p, counter.p, dw.p, ti.type, dx.p, 1, X, cols, k, true, nullptr, &nm),
                  "moe_gate norm") &&
               ok(cudaDeviceSynchronize(), "moe_gate norm sync");
        logits[fused] = download(dl, static_cast<size_t>(X));
        wts[fused] = download(dwt, static_cast<size_t>(k));
        ids[fused] = download(di, static_cast<size_t>(k));
        y[fused] = download(dy, x.size());
        q[fused] = download(dq, x.size());
        ds[fused] = download(dds, x.size() / 32);
      }
      cuda::moe_gate_set_norm_fused(was);
      const bool taken = cuda::moe_gate_norm_launches() == before + 1;
      const bool same_route = same_bits(logits[0], logits[1]) && same_bits(wts[0], wts[1]) && ids[0] == ids[1];
      const bool same_norm = same_bits(y[0], y[1]) && same_bits(q[0], q[1]) && same_bits(ds[0], ds[1]);
      int zero_q = 0;  // a slice left unwritten would read back as the memset's zeros in both
      for (size_t i = 0; i < q[1].size(); ++i) zero_q += q[1][i] == 0;
      const bool written = zero_q < static_cast<int>(q[1].size()) / 8;
      report(r, good && taken && same_route && same_norm && written, true, "moe_gate norm",
             std::to_string(X) + " x 2048 F32, 1 tok, top 8" + (one_plus ? ", 1 + w" : "") + ": fused kernel " +
                 (taken ? "taken" : "NOT taken") + ", routing " + (same_route ? "bit-equal" : "DIFFERS") +
                 ", norm output " + (same_norm ? "bit-equal" : "DIFFERS") + ", zero codes " + std::to_string(zero_q),
             0.0);
    }
  }
  // Refusals: a quantized router, too many tokens, a misaligned weight.
  const bool refused = !cuda::moe_gate_supports(counter.p, static_cast<uint32_t>(GgmlType::Q8_0), 1, 128, 2048) &&
                       !cuda::moe_gate_supports(counter.p, 0, cuda::kMoeGateMaxTokens + 1, 128, 2048) &&
                       !cuda::moe_gate_supports(reinterpret_cast<const uint8_t*>(counter.p) + 4, 0, 1, 128, 2048) &&
                       cuda::moe_gate(nullptr, nullptr, nullptr, counter.p, nullptr,
                                      static_cast<uint32_t>(GgmlType::Q8_0), nullptr, 1, 128, 2048, 8, true,
                                      nullptr) == cudaErrorInvalidValue;
  report(r, refused, true, "moe_gate", "Q8_0 router, 9 tokens, misaligned weight refused", 0.0);
}

// gemv_q8_combine (the routed down projection adding its pairs into the residual) against the
// routed store launch followed by moe_combine: x bit-identical, for k = 2 (3 tokens, no shared
// expert) and k = 8 (2 tokens, every warp a pair, a shared expert); rows not a multiple of four and
// k = 10 (more pairs than warps) refused.
void check_moe_combine(std::mt19937& rng, Result& r, GgmlType t, int64_t rows, int64_t cols, const uint8_t* stack,
                       int64_t expert_bytes, int n_expert) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const uint32_t type = static_cast<uint32_t>(t);
  if (!cuda::gemv_q8_combine_supports(type, rows, cols, 2)) {
    DeviceBuffer<float> dx(static_cast<size_t>(rows)), dw(2);
    DeviceBuffer<int32_t> di(2);
    DeviceBuffer<int8_t> dq(size_t(2 * cols));
    DeviceBuffer<float2> dds(size_t(2 * cols / 32));
    const cudaError_t e = cuda::gemv_q8_combine(stack, type, rows, cols, cuda::ActQ8{dq.p, dds.p},
                                                cuda::GemvRoute{di.p, expert_bytes, 2, 1},
                                                cuda::MoeCombine{dx.p, dw.p, nullptr, nullptr, 2}, nullptr);
    report(r, rows % 4 != 0 && e == cudaErrorInvalidValue && cudaDeviceSynchronize() == cudaSuccess, true,
           fmt_name("moe down + combine", t, ""), std::to_string(rows) + " rows refused", 0.0);
    return;
  }
  if (cuda::gemv_q8_combine_supports(type, rows, cols, 10)) {
    report(r, false, true, fmt_name("moe down + combine", t, ""), "k = 10 not refused", 0.0);
    return;
  }
  // Where the cp.async form took a row, the row again with it turned off (pass bit 0), and where two
  // row groups a CTA took it, again with one (pass bit 1), both ways: every form stays checked.
  const bool was_async = cuda::gemv_q8_combine_async(), was_wide = cuda::gemv_q8_combine_wide(),
             was_bulk = cuda::gemv_q8_combine_bulk();
  bool took_async = false, took_wide = false, took_bulk = false;
  // Pass bit 2: the launch quantizing the pairs' f32 rows itself (MoeCombine::act) where it does, against the
  // same reference (the host's int8 rows): the codes and scales must be rmsnorm_q8's. Bit 3: where that launch
  // copied its rows by cp.async.bulk, again with the lanes' cp.async (or register loads) in its place.
  for (int pass = 0; pass < 16; ++pass) {
    const bool async_off = pass & 1, wide_off = pass & 2, quant = pass & 4, bulk_off = pass & 8;
    if ((async_off && !took_async) || (wide_off && !took_wide) || (quant && wide_off) ||
        (bulk_off && (!took_bulk || !quant || async_off)))
      continue;
    cuda::gemv_q8_set_combine_async(was_async && !async_off);
    cuda::gemv_q8_set_combine_wide(was_wide && !wide_off);
    cuda::gemv_q8_set_combine_bulk(was_bulk && !bulk_off);
    for (auto [n, k, shared] : {std::tuple{3, 2, false}, std::tuple{2, 8, true}}) {
      if (quant && !cuda::gemv_q8_combine_quantizes(type, rows, cols, k)) continue;
      const int pairs = n * k;
      std::vector<int32_t> ids(static_cast<size_t>(pairs));
      for (auto& v : ids) v = static_cast<int32_t>(rng() % n_expert);
      std::vector<float> act(size_t(pairs * cols)), x(size_t(n * rows)), wts(static_cast<size_t>(pairs)),
          so(size_t(n * rows)), sg(static_cast<size_t>(n));
      for (auto* v : {&act, &x, &wts, &so, &sg})
        for (auto& f : *v) f = nd(rng);
      const ActInt8 a = quantize_act(act);
      DeviceBuffer<int32_t> di(ids.size());
      DeviceBuffer<int8_t> dq(a.q.size());
      DeviceBuffer<float2> dds(a.ds.size());
      DeviceBuffer<float> dx_ref(x.size()), dx(x.size()), dy(size_t(pairs * rows)), dw(wts.size()), dso(so.size()),
          dsg(sg.size());
      upload(di, ids);
      upload(dq, a.q);
      upload(dds, a.ds);
      upload(dx_ref, x);
      upload(dx, x);
      upload(dw, wts);
      upload(dso, so);
      upload(dsg, sg);
      DeviceBuffer<float> dact(quant ? act.size() : 1);
      if (quant) upload(dact, act);
      const cuda::GemvRoute route{di.p, expert_bytes, pairs, 1};
      const cuda::ActQ8 xq{dq.p, dds.p};
      const float* shared_out = shared ? dso.p : nullptr;
      const long async_before = cuda::gemv_q8_combine_async_launches();
      const long bulk_before = cuda::gemv_q8_combine_bulk_launches();
      const long wide_before = cuda::gemv_q8_combine_wide_launches();
      bool good = ok(cuda::gemv_q8(stack, nullptr, type, rows, cols, xq, 1, dy.p, cuda::GemvOut::kStore, 0, nullptr,
                                   &route),
                     "routed gemv") &&
                  ok(cuda::moe_combine(dx_ref.p, dy.p, dw.p, shared_out, dsg.p, n, k, rows, nullptr), "moe_combine") &&
                  ok(cuda::gemv_q8_combine(stack, type, rows, cols, xq, route,
                                           cuda::MoeCombine{dx.p, dw.p, shared_out, dsg.p, k, quant ? dact.p : nullptr},
                                           nullptr),
                     "gemv_q8_combine") &&
                  ok(cudaDeviceSynchronize(), "gemv_q8_combine sync");
      const auto got = download(dx, x.size()), want = download(dx_ref, x.size());
      int differ = 0;
      for (size_t i = 0; i < got.size(); ++i) differ += !(got[i] == want[i]);
      const bool async = cuda::gemv_q8_combine_async_launches() == async_before + 1;
      const bool wide = cuda::gemv_q8_combine_wide_launches() == wide_before + 1;
      const bool bulk = cuda::gemv_q8_combine_bulk_launches() == bulk_before + 1;
      took_async = took_async || async || bulk;  // the bulk form is the cp.async form's, with its switch
      took_wide = took_wide || wide;
      took_bulk = took_bulk || bulk;
      report(r, good && differ == 0 && !(async_off && (async || bulk)) && !(wide_off && wide) && !(bulk_off && bulk),
             true, fmt_name("moe down + combine", t, shared ? "shared" : ""),
             std::to_string(n) + " tok x " + std::to_string(k) + " experts, " + std::to_string(rows) + " x " +
                 std::to_string(cols) +
                 (bulk    ? ", weights by cp.async.bulk"
                  : async ? ", weights by cp.async"
                  : async_off ? ", register loads"
                              : "") +
                 (wide ? ", two row groups a CTA" : wide_off ? ", one row group a CTA" : "") +
                 (quant ? ", quantized in the launch" : "") +
                 ", outputs differing " + std::to_string(differ),
             0.0);
    }
  }
  cuda::gemv_q8_set_combine_async(was_async);
  cuda::gemv_q8_set_combine_wide(was_wide);
  cuda::gemv_q8_set_combine_bulk(was_bulk);
  // Where the launch does not quantize its own input (a format or shape gemv_q8_combine_quantizes declines),
  // a MoeCombine with f32 rows is refused rather than read as int8.
  if (!cuda::gemv_q8_combine_quantizes(type, rows, cols, 2)) {
    DeviceBuffer<float> dx(static_cast<size_t>(rows)), dw(2), dact(size_t(2 * cols));
    DeviceBuffer<int32_t> di(2);
    const cudaError_t e = cuda::gemv_q8_combine(stack, type, rows, cols, cuda::ActQ8{},
                                                cuda::GemvRoute{di.p, expert_bytes, 2, 1},
                                                cuda::MoeCombine{dx.p, dw.p, nullptr, nullptr, 2, dact.p}, nullptr);
    report(r, e == cudaErrorInvalidValue && cudaDeviceSynchronize() == cudaSuccess, true,
           fmt_name("moe down + combine", t, ""),
           std::to_string(rows) + " x " + std::to_string(cols) + ", f32 input where it does not quantize: refused", 0.0);
  }
}

}  // namespace

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
        std::vector<int32_t> ids_ref;
        std::vector<float> w_ref;
        route_ref(logits, n, X, k, renorm, ids_ref, w_ref);
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
  check_moe_gate(rng, r);
  // The MoE decode launches' residency (gemv_q8_routed_occupancy) at Qwen3-30B-A3B's widths: the Q4_K
  // routed gate-up at four CTAs an SM and every combine at 1,024 threads an SM (four CTAs of 8 warps, or
  // two of 16 where two row groups a CTA take it), the counts their grids were measured with.
  // A gate-up grown to 70 registers ran at three (768 CTAs a layer in waves of 396 + 372 instead of
  // 528 + 240; docs/performance.md round 37). Q5_K / Q6_K gate-ups are shown, not held (they spill at
  // 64 registers).
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    cuda::GemvOccupancy gate_up, combine;
    const bool ran = ok(cuda::gemv_q8_routed_occupancy(static_cast<uint32_t>(t), 2048, 768, 8, &gate_up, &combine),
                        "gemv_q8_routed_occupancy");
    const bool held =
        (t != GgmlType::Q4_K || gate_up.ctas_per_sm >= 4) && combine.ctas_per_sm * combine.threads >= 1024;
    std::string shape = "gate-up 2048 cols: " + std::to_string(gate_up.regs) + " registers, ";
    shape += std::to_string(gate_up.ctas_per_sm) + " CTAs an SM; combine 768 cols x 8: ";
    shape += std::to_string(combine.regs) + " registers, " + std::to_string(combine.ctas_per_sm) + " CTAs of " +
             std::to_string(combine.threads) + " threads an SM";
    report(r, ran && held, true, fmt_name("moe decode occupancy", t, ""), shape, 0.0);
  }
  // Routed GEMVs: 8 experts of rows x cols, 3 tokens x 2 experts each = 6 pairs. Row counts that
  // are multiples of 4 take four rows a warp in store launches (40 x 512: one CTA and a part;
  // 48 x 768: three K-quant blocks a row, as a Qwen3-30B-A3B down projection); 41 x 2048 a row a
  // warp. (The shapes keep every format's expert stride a multiple of 16 bytes.)
  const int X = 8, k = 2, n = 3, pairs = n * k;
  std::vector<int32_t> ids(static_cast<size_t>(pairs));
  for (auto& v : ids) v = static_cast<int32_t>(rng() % X);
  DeviceBuffer<int32_t> dids(ids.size());
  upload(dids, ids);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{40, 512}, {48, 768}, {41, 2048}}) {
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
          const long bulk_before = cuda::gemv_q8_gate_up_bulk_launches();
          cuda::gemv_q8_set_gate_up_bulk_always(true);  // these grids are one wave: the bulk kernel where it runs
          const uint8_t* w = dstack[0]->p;
          const uint8_t* w2 = out == cuda::GemvOut::kGateUp ? dstack[1]->p : nullptr;
          bool good = ok(q8 ? cuda::gemv_q8(w, w2, type, rows, cols, cuda::ActQ8{dq.p, dds.p}, 1, dy.p, out, 0, nullptr,
                                            &route)
                            : cuda::gemv(w, type, rows, cols, dx.p, 1, dy.p, out, nullptr, &route),
                         "routed gemv");
          cuda::gemv_q8_set_gate_up_bulk_always(false);
          // Each pair alone, as a plain GEMV on the kernel the routed launch uses (the warp-per-row
          // kernel: one-token launches would otherwise take the streamed kernel, whose float sums
          // run in another order).
          const bool streamed = cuda::gemv_q8_streamed();
          cuda::gemv_q8_set_streamed(false);
          for (int p = 0; p < pairs && good; ++p) {
            const int64_t xr = p / x_div, off = int64_t{ids[size_t(p)]} * expert_bytes;
            float* y = dref.p + p * rows;
            good = ok(q8 ? cuda::gemv_q8(w + off, w2 ? w2 + off : nullptr, type, rows, cols,
                                         cuda::ActQ8{dq.p + xr * cols, dds.p + xr * (cols / 32)}, 1, y, out, 0, nullptr)
                         : cuda::gemv(w + off, type, rows, cols, dx.p + xr * cols, 1, y, out, nullptr),
                      "gemv");
          }
          cuda::gemv_q8_set_streamed(streamed);
          good = good && ok(cudaDeviceSynchronize(), "routed gemv sync");
          const auto a = download(dy, size_t(pairs * rows)), b = download(dref, size_t(pairs * rows));
          int differ = 0;
          for (size_t i = 0; i < a.size(); ++i) differ += !(a[i] == b[i]);
          const bool bulk = cuda::gemv_q8_gate_up_bulk_launches() == bulk_before + 1;
          report(r, good && differ == 0, true,
                 fmt_name("routed gemv", t, out == cuda::GemvOut::kGateUp ? "gate-up" : ""),
                 "8 experts " + std::to_string(rows) + " x " + std::to_string(cols) + ", 6 pairs, x_div " +
                     std::to_string(x_div) + (bulk ? ", rows by cp.async.bulk" : "") + ", outputs differing " +
                     std::to_string(differ),
                 0.0);
        }
      }
      if (q8) check_moe_combine(rng, r, t, rows, cols, dstack[0]->p, expert_bytes, X);
      if (q8 && rows == 40) {  // an expert stride off 16 bytes: an error code, not a misaligned load
        const cuda::GemvRoute bad{dids.p, expert_bytes + 8, pairs, k};
        DeviceBuffer<int8_t> dq(size_t(n * cols));
        DeviceBuffer<float2> dds(size_t(n * cols / 32));
        DeviceBuffer<float> dy(size_t(pairs * rows));
        const cudaError_t e = cuda::gemv_q8(dstack[0]->p, nullptr, static_cast<uint32_t>(t), rows, cols,
                                            cuda::ActQ8{dq.p, dds.p}, 1, dy.p, cuda::GemvOut::kStore, 0, nullptr, &bad);
        report(r, e == cudaErrorInvalidValue && cudaDeviceSynchronize() == cudaSuccess, true,
               fmt_name("routed gemv", t, "stride"), "expert stride 16 n + 8 bytes rejected", 0.0);
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

}  // namespace bw24::kcheck
