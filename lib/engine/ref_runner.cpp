// The CPU reference runner: walks the ModelGraph block by block with lib/ref ops, all tokens of a
// request at once (each weight row is dequantized once per request, not once per token).
#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/core/dtype.h"
#include "lib/core/status.h"
#include "lib/core/thread_pool.h"
#include "lib/engine/runner.h"
#include "lib/sampling/sampler.h"
#include "lib/ref/delta_rule.h"
#include "lib/ref/ops.h"

namespace bw24::engine {
namespace {

using arch::AttentionBlock;
using arch::MlpBlock;
using arch::ModelGraph;
using arch::Norm;

class RefRunner final : public Runner {
 public:
  RefRunner(const ModelGraph& g, const RunnerOptions& opt, kv::HostKvCache kv)
      : g_(g), opt_(opt), pool_(opt.n_threads), kv_(std::move(kv)) {
    int32_t slots = 0;
    for (const auto& L : g_.layers) {
      const arch::DeltaNetBlock& b = L.delta_net;
      kv_slot_.push_back(L.recurrent ? -1 : slots++);
      conv_state_.emplace_back(L.recurrent ? size_t(b.conv_kernel - 1) * b.conv_dim() : 0, 0.0f);
      ssm_state_.emplace_back(L.recurrent ? size_t(b.n_v_heads) * b.d_k * b.d_v : 0, 0.0f);
      recurrent_ |= L.recurrent;
    }
  }

  // y = W x for n rows; with RunnerOptions::round_act_int8, the rows of every product over
  // quantized weights are first rounded to int8 blocks of 32 as the CUDA GEMV's int8 path does.
  void mm(const loaders::TensorInfo& w, const float* x, int64_t n, float* y) {
    const bool quantized = w.type != 0 && w.type != 1 && w.type != static_cast<uint32_t>(GgmlType::BF16);
    if (!opt_.round_act_int8 || !quantized || w.ne[0] % 32 != 0) return ref::matmul(pool_, w, x, n, y);
    const int64_t elems = n * w.ne[0];
    std::vector<float> xr(static_cast<size_t>(elems)), d(static_cast<size_t>(elems / 32));
    std::vector<int8_t> q(static_cast<size_t>(elems));
    ref::quantize_act_q8(x, elems, q.data(), d.data());
    for (int64_t i = 0; i < elems; ++i) xr[size_t(i)] = d[size_t(i / 32)] * q[size_t(i)];
    ref::matmul(pool_, w, xr.data(), n, y);
  }

  uint64_t state_bytes() const override {
    uint64_t n = kv_.bytes();
    for (size_t l = 0; l < conv_state_.size(); ++l) n += (conv_state_[l].size() + ssm_state_[l].size()) * 4;
    return n;
  }
  bool recurrent() const override { return recurrent_; }
  bool device_argmax() const override { return opt_.emulate_device_choice; }
  absl::Status last_logits(float* out) override {
    if (!opt_.emulate_device_choice || last_.empty()) return error(Code::kState, "no logits kept");
    std::copy(last_.begin(), last_.end(), out);
    return absl::OkStatus();
  }
  // emulate_device_choice: the step queue, run lazily: a queued step runs when it is finished, so
  // one taken back (drop_step) never runs, which is what a held step on a device leaves behind.
  bool can_queue_steps(bool /*armed*/) const override { return opt_.emulate_device_choice && opt_.run_ahead; }
  absl::Status queue_step(const QueuedStep& s) override {
    if (!opt_.emulate_device_choice) return Runner::queue_step(s);
    if (queued_.size() == 2) return error(Code::kState, "two decode steps are queued already");
    if (s.token < 0 && queued_.empty()) return error(Code::kState, "no queued step chooses this step's token");
    queued_.push_back({s.token, s.pos, s.sample != nullptr, s.sample ? *s.sample : DeviceSampling{}});
    return absl::OkStatus();
  }
  absl::Status finish_step(int32_t* choice) override {
    if (queued_.empty()) return error(Code::kState, "no decode step is queued");
    const Queued q = queued_.front();
    queued_.erase(queued_.begin());
    int32_t tok = q.token >= 0 ? q.token : last_choice_;
    ForwardRequest req;
    req.tokens = &tok;
    req.n = 1;
    req.pos = q.pos;
    req.argmax = choice;
    req.sample = q.sampled ? &q.sample : nullptr;
    BW24_RETURN_IF_ERROR(forward(req));
    last_choice_ = *choice;
    return absl::OkStatus();
  }
  absl::Status drop_step() override {
    if (queued_.empty()) return error(Code::kState, "no decode step is queued");
    queued_.erase(queued_.begin());
    return absl::OkStatus();
  }
  void abandon_steps() override { queued_.clear(); }

  void reset() override {
    for (auto& v : conv_state_) std::fill(v.begin(), v.end(), 0.0f);
    for (auto& v : ssm_state_) std::fill(v.begin(), v.end(), 0.0f);
    state_pos_ = 0;
  }

  absl::Status forward(const ForwardRequest& req) override {
    const int64_t n = req.n, E = g_.n_embd;
    // The recurrent state summarizes exactly the positions before state_pos_ (the session resets
    // and replays on rewind).
    if (recurrent_ && req.pos != state_pos_)
      return error(Code::kState, "the recurrent state is at position {}, not {}", state_pos_, req.pos);
    std::vector<float> x(n * E), h(n * E);
    embed_tokens(g_, req.tokens, n, x.data());
    const bool fail = ++forward_calls_ == opt_.fail_forward_at;
    for (size_t il = 0; il < g_.layers.size(); ++il) {
      // A half-updated recurrent state is the session's to rebuild (Session::replay).
      if (req.cancel && req.cancel->load(std::memory_order_relaxed))
        return error(Code::kCancelled, "cancelled at layer {}", il);
      if (fail && il == 1) return error(Code::kDevice, "forward call {} failed at layer 1 (injected)", forward_calls_);
      const arch::Layer& L = g_.layers[il];
      if (L.recurrent) {
        norm_rows(L.delta_net.norm, x.data(), h.data(), n, E);
        delta_net(L.delta_net, il, h.data(), n, x.data());
      } else {
        norm_rows(L.attn.norm, x.data(), h.data(), n, E);
        attention(L.attn, kv_slot_[il], h.data(), n, req.pos, x.data());
      }
      norm_rows(L.mlp.norm, x.data(), h.data(), n, E);
      mlp(L.mlp, h.data(), n, x.data());
    }
    // Only the rows whose logits were asked for go through the head.
    const int64_t first = req.all_logits ? 0 : n - 1, rows = n - first;
    norm_rows(g_.output_norm, x.data() + first * E, h.data(), rows, E);
    const int64_t V = g_.n_vocab;
    const bool choose = opt_.emulate_device_choice && req.argmax && !req.all_logits;
    if (opt_.emulate_device_choice) last_.resize(size_t(V));
    mm(*g_.output.t, h.data(), rows, choose ? last_.data() : req.logits);
    if (opt_.emulate_device_choice && !choose) std::copy_n(req.logits + (rows - 1) * V, V, last_.data());
    if (choose) {
      const DeviceSampling* s = req.sample;
      sampling::Params p;
      if (s) p.temperature = s->temperature, p.top_k = s->top_k, p.top_p = s->top_p, p.min_p = s->min_p;
      *req.argmax = s ? sampling::sample_with_draw(last_.data(), int32_t(V), p, s->u, ids_)
                      : sampling::argmax(last_.data(), int32_t(V));
    }
    state_pos_ = req.pos + n;
    return absl::OkStatus();
  }

 private:
  void norm_rows(const Norm& nm, const float* in, float* out, int64_t n, int64_t width) {
    std::vector<float> w(width);
    ref::dequant_row(*nm.w.t, 0, w.data());
    for (int64_t t = 0; t < n; ++t)
      ref::rmsnorm(out + t * width, in + t * width, w.data(), width, g_.norm_eps, nm.one_plus);
  }

  // x += attention(h) for n tokens at positions pos .. pos + n - 1; the layer's K/V rows live in
  // KV cache layer `slot` (attention layers only are numbered: a hybrid's delta-net layers have
  // no cache).
  void attention(const AttentionBlock& a, int32_t slot, const float* h, int64_t n, int64_t pos,
                 float* x) {
    const int64_t D = a.head_dim, qw = int64_t{a.n_head} * D, kw = int64_t{a.n_head_kv} * D;
    std::vector<float> q(n * qw), k(n * kw), v(n * kw), o(n * qw), proj(n * g_.n_embd), gate;
    if (a.gated) {  // rows per head: [q (D) | gate (D)]
      std::vector<float> qg(n * 2 * qw);
      gate.resize(n * qw);
      mm(*a.wq.t, h, n, qg.data());
      for (int64_t t = 0; t < n; ++t)
        for (int32_t hh = 0; hh < a.n_head; ++hh) {
          std::copy_n(&qg[(t * a.n_head + hh) * 2 * D], D, &q[t * qw + hh * D]);
          std::copy_n(&qg[(t * a.n_head + hh) * 2 * D + D], D, &gate[t * qw + hh * D]);
        }
    } else {
      mm(*a.wq.t, h, n, q.data());
    }
    mm(*a.wk.t, h, n, k.data());
    mm(*a.wv.t, h, n, v.data());
    std::vector<float> qn(D), kn(D);
    if (a.q_norm.w) ref::dequant_row(*a.q_norm.w.t, 0, qn.data());
    if (a.k_norm.w) ref::dequant_row(*a.k_norm.w.t, 0, kn.data());
    const bool neox = a.rope_style == arch::RopeStyle::kNeox;
    for (int64_t t = 0; t < n; ++t) {
      for (int32_t hh = 0; hh < a.n_head; ++hh) {
        float* qh = &q[t * qw + hh * D];
        if (a.q_norm.w) ref::rmsnorm(qh, qh, qn.data(), D, g_.norm_eps, a.q_norm.one_plus);
        ref::rope(qh, a.rope_dims, pos + t, a.rope_theta, neox);
      }
      for (int32_t hh = 0; hh < a.n_head_kv; ++hh) {
        float* kh = &k[t * kw + hh * D];
        if (a.k_norm.w) ref::rmsnorm(kh, kh, kn.data(), D, g_.norm_eps, a.k_norm.one_plus);
        ref::rope(kh, a.rope_dims, pos + t, a.rope_theta, neox);
      }
      kv_.store(slot, pos + t, &k[t * kw], &v[t * kw]);
    }
    // Each kv head's history [lo, pos + n - 1] is gathered once, then every query head of its
    // group and every new token attends to its causal (and windowed) slice of it.
    const int64_t last_pos = pos + n - 1;
    const int64_t lo = a.sliding_window > 0 ? std::max<int64_t>(0, pos - a.sliding_window + 1) : 0;
    const int32_t group = a.n_head / a.n_head_kv;
    pool_.parallel_for(a.n_head_kv, 1, [&](int64_t g0, int64_t g1) {
      std::vector<float> kh((last_pos - lo + 1) * D), vh((last_pos - lo + 1) * D), scratch(last_pos + 1);
      for (int64_t g = g0; g < g1; ++g) {
        kv_.gather(slot, static_cast<int32_t>(g), lo, last_pos, kh.data(), vh.data());
        for (int64_t t = 0; t < n; ++t) {
          const int64_t p = pos + t;
          const int64_t first = a.sliding_window > 0 ? std::max<int64_t>(0, p - a.sliding_window + 1) : 0;
          for (int32_t j = 0; j < group; ++j) {
            const int64_t head = g * group + j;
            ref::attend_head(&o[t * qw + head * D], &q[t * qw + head * D], kh.data(), D, vh.data(),
                             D, first - lo, p - lo, a.head_dim, a.scale, scratch.data());
          }
        }
      }
    });
    if (a.gated)
      for (int64_t i = 0; i < n * qw; ++i) o[i] *= 1.0f / (1.0f + std::exp(-gate[i]));
    mm(*a.wo.t, o.data(), n, proj.data());
    if (a.post_norm.w) norm_rows(a.post_norm, proj.data(), proj.data(), n, g_.n_embd);
    for (int64_t i = 0; i < n * g_.n_embd; ++i) x[i] += proj[i];
  }

  // x += out_proj(gated_norm(delta rule(conv(in_qkv h)), in_z h)) through the layer's conv and
  // recurrent state (graph.h DeltaNetBlock).
  void delta_net(const arch::DeltaNetBlock& b, size_t layer, const float* h, int64_t n, float* x) {
    const int64_t C = b.conv_dim(), K = b.conv_kernel, Hk = b.n_k_heads, Hv = b.n_v_heads, dk = b.d_k, dv = b.d_v;
    const int64_t Kd = Hk * dk, Vd = Hv * dv, r = Hv / Hk;
    std::vector<float> qkv(n * C), z(n * Vd), beta(n * Hv), alpha(n * Hv), o(n * Vd), proj(n * g_.n_embd);
    mm(*b.in_qkv.t, h, n, qkv.data());
    mm(*b.in_z.t, h, n, z.data());
    if (b.in_ba) {  // fused per key head: [b (r) | a (r)] for each of the Hk groups
      std::vector<float> ba(n * 2 * Hv);
      mm(*b.in_ba.t, h, n, ba.data());
      for (int64_t t = 0; t < n; ++t)
        for (int64_t g = 0; g < Hk; ++g)
          for (int64_t j = 0; j < r; ++j) {
            beta[t * Hv + g * r + j] = ba[t * 2 * Hv + g * 2 * r + j];
            alpha[t * Hv + g * r + j] = ba[t * 2 * Hv + g * 2 * r + r + j];
          }
    } else {
      mm(*b.in_b.t, h, n, beta.data());
      mm(*b.in_a.t, h, n, alpha.data());
    }
    std::vector<float> conv(K * C), dt(Hv), neg_a(Hv), nw(dv);
    for (int64_t c = 0; c < C; ++c) ref::dequant_row(*b.conv.t, c, &conv[c * K]);  // taps of channel c
    ref::dequant_row(*b.dt_bias.t, 0, dt.data());
    ref::dequant_row(*b.a.t, 0, neg_a.data());
    if (b.a_is_log)
      for (auto& v : neg_a) v = -std::exp(v);  // -exp(A_log), as GGUF stores it
    ref::dequant_row(*b.gated_norm.t, 0, nw.data());
    std::vector<float>& cs = conv_state_[layer];  // the last K - 1 inputs, oldest first
    std::vector<float>& S = ssm_state_[layer];    // [Hv][dk][dv]
    std::vector<float> Y(n * C);
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    for (int64_t t = 0; t < n; ++t) {
      // Causal depthwise conv + SiLU (the state shifts by one), then l2-normalized q and k.
      ref::causal_conv_silu_step(conv.data(), C, K, cs.data(), &qkv[t * C], &Y[t * C]);
      ref::l2norm_qk(&Y[t * C], Hk, dk, q_scale);
    }
    // Per value head: the delta rule over the n tokens, recurrent for one token, chunked for
    // more (lib/ref/delta_rule.h; the two agree, tests/unit/test_engine_parts.cpp).
    std::vector<float> qh(n * dk), kh(n * dk), vh(n * dv), gh(n), bh(n), oh(n * dv);
    for (int64_t hv = 0; hv < Hv; ++hv) {
      const int64_t hk = b.v_heads_tiled ? hv % Hk : hv / r;
      for (int64_t t = 0; t < n; ++t) {
        std::copy_n(&Y[t * C + hk * dk], dk, &qh[t * dk]);
        std::copy_n(&Y[t * C + Kd + hk * dk], dk, &kh[t * dk]);
        std::copy_n(&Y[t * C + 2 * Kd + hv * dv], dv, &vh[t * dv]);
        bh[t] = ref::delta_beta(beta[t * Hv + hv]);
        gh[t] = ref::delta_log_decay(alpha[t * Hv + hv], dt[hv], neg_a[hv]);
      }
      float* Sh = &S[hv * dk * dv];
      if (n == 1)
        ref::gated_delta_recurrent(qh.data(), kh.data(), vh.data(), gh.data(), bh.data(), n, dk, dv, Sh, oh.data());
      else
        ref::gated_delta_chunked(qh.data(), kh.data(), vh.data(), gh.data(), bh.data(), n, dk, dv, 64, Sh, oh.data());
      for (int64_t t = 0; t < n; ++t) {
        float* out = &o[t * Vd + hv * dv];
        std::copy_n(&oh[t * dv], dv, out);
        // Gated RMSNorm: norm(o) * w * silu(z).
        ref::rmsnorm(out, out, nw.data(), dv, g_.norm_eps, false);
        const float* zh = &z[t * Vd + hv * dv];
        for (int64_t j = 0; j < dv; ++j) out[j] *= zh[j] / (1.0f + std::exp(-zh[j]));
      }
    }
    mm(*b.out_proj.t, o.data(), n, proj.data());
    for (int64_t i = 0; i < n * g_.n_embd; ++i) x[i] += proj[i];
  }

  // x += down(act(gate(h)) * up(h))
  void mlp(const MlpBlock& m, const float* h, int64_t n, float* x) {
    if (m.is_moe()) return moe(m, h, n, x);
    const int64_t F = m.gate.rows();
    std::vector<float> gate(n * F), up(n * F), proj(n * g_.n_embd);
    mm(*m.gate.t, h, n, gate.data());
    mm(*m.up.t, h, n, up.data());
    if (m.act == arch::Activation::kSilu) ref::silu_mul(gate.data(), gate.data(), up.data(), n * F);
    else ref::gelu_tanh_mul(gate.data(), gate.data(), up.data(), n * F);
    mm(*m.down.t, gate.data(), n, proj.data());
    if (m.post_norm.w) norm_rows(m.post_norm, proj.data(), proj.data(), n, g_.n_embd);
    for (int64_t i = 0; i < n * g_.n_embd; ++i) x[i] += proj[i];
  }

  // Expert e of a stacked [cols, rows, n_expert] tensor as a 2-D tensor.
  static loaders::TensorInfo expert(const arch::Weight& w, int64_t e) {
    loaders::TensorInfo v = *w.t;
    const uint64_t bytes = w.t->n_bytes / static_cast<uint64_t>(w.t->ne[2]);
    v.ne = {w.t->ne[0], w.t->ne[1], 1, 1};
    v.n_dims = 2;
    v.data = w.t->data + static_cast<uint64_t>(e) * bytes;
    v.n_bytes = bytes;
    return v;
  }

  // x += sum over the token's top-k experts of p_e * down_e(act(gate_e(h)) * up_e(h)), p = the
  // router's softmax restricted to the top k (renormalized when norm_topk), as transformers'
  // Qwen3MoeSparseMoeBlock. Tokens are grouped by expert, so each expert is dequantized once.
  void moe(const MlpBlock& m, const float* h, int64_t n, float* x) {
    const arch::MoeBlock& e = m.moe;
    const int64_t E = g_.n_embd, F = e.gate_exps.t->ne[1], X = e.n_expert;
    std::vector<float> logits(n * X);
    mm(*e.router.t, h, n, logits.data());
    std::vector<std::vector<std::pair<int64_t, float>>> routed(X);  // expert -> (token, weight)
    std::vector<int32_t> order(X);
    for (int64_t t = 0; t < n; ++t) {
      float* p = &logits[t * X];
      ref::softmax(p, X);
      for (int32_t i = 0; i < X; ++i) order[i] = i;
      std::partial_sort(order.begin(), order.begin() + e.n_used, order.end(),
                        [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
      float sum = 0;
      for (int32_t k = 0; k < e.n_used; ++k) sum += p[order[k]];
      for (int32_t k = 0; k < e.n_used; ++k)
        routed[order[k]].push_back({t, e.norm_topk ? p[order[k]] / sum : p[order[k]]});
    }
    std::vector<float> in, gate, up, out;
    for (int64_t ex = 0; ex < X; ++ex) {
      const auto& tok = routed[ex];
      if (tok.empty()) continue;
      const int64_t k = static_cast<int64_t>(tok.size());
      in.resize(k * E);
      gate.resize(k * F);
      up.resize(k * F);
      out.resize(k * E);
      for (int64_t i = 0; i < k; ++i) std::copy_n(h + tok[i].first * E, E, &in[i * E]);
      mm(expert(e.gate_exps, ex), in.data(), k, gate.data());
      mm(expert(e.up_exps, ex), in.data(), k, up.data());
      if (m.act == arch::Activation::kSilu) ref::silu_mul(gate.data(), gate.data(), up.data(), k * F);
      else ref::gelu_tanh_mul(gate.data(), gate.data(), up.data(), k * F);
      mm(expert(e.down_exps, ex), gate.data(), k, out.data());
      for (int64_t i = 0; i < k; ++i)
        for (int64_t c = 0; c < E; ++c) x[tok[i].first * E + c] += tok[i].second * out[i * E + c];
    }
    if (e.shared_gate_inp) {  // the shared expert, every token, scaled by its sigmoid gate
      const int64_t Fs = e.shared_gate.rows();
      std::vector<float> sg(n), sgate(n * Fs), sup(n * Fs), sout(n * E);
      mm(*e.shared_gate_inp.t, h, n, sg.data());
      mm(*e.shared_gate.t, h, n, sgate.data());
      mm(*e.shared_up.t, h, n, sup.data());
      ref::silu_mul(sgate.data(), sgate.data(), sup.data(), n * Fs);
      mm(*e.shared_down.t, sgate.data(), n, sout.data());
      for (int64_t t = 0; t < n; ++t) {
        const float gsh = 1.0f / (1.0f + std::exp(-sg[t]));
        for (int64_t c = 0; c < E; ++c) x[t * E + c] += gsh * sout[t * E + c];
      }
    }
  }

  const ModelGraph& g_;
  RunnerOptions opt_;
  std::vector<float> last_;     // emulate_device_choice: the last forward's last logits row
  struct Queued {               // emulate_device_choice: a queued step, not yet run
    int32_t token;
    int64_t pos;
    bool sampled;
    DeviceSampling sample;
  };
  std::vector<Queued> queued_;
  int32_t last_choice_ = -1;    // the last finished step's choice: the token of a step queued with -1
  std::vector<int32_t> ids_;    // sampling scratch
  ThreadPool pool_;
  kv::HostKvCache kv_;
  std::vector<std::vector<float>> conv_state_, ssm_state_;  // per layer; empty for attention layers
  std::vector<int32_t> kv_slot_;                            // per layer: its KV cache layer, -1 for delta nets
  bool recurrent_ = false;
  int64_t state_pos_ = 0;
  int32_t forward_calls_ = 0;  // fail_forward_at's count
};

}  // namespace

void embed_tokens(const ModelGraph& g, const int32_t* tokens, int64_t n, float* out) {
  const int64_t E = g.n_embd;
  for (int64_t t = 0; t < n; ++t) {
    float* row = out + t * E;
    ref::dequant_row(*g.tok_embd.t, tokens[t], row);
    if (g.embd_scale != 1.0f)
      for (int64_t i = 0; i < E; ++i) row[i] *= g.embd_scale;
  }
}

absl::StatusOr<std::unique_ptr<Runner>> make_ref_runner(const ModelGraph& graph,
                                                        const RunnerOptions& opt) {
  if (graph.layers.empty()) return error(Code::kModel, "model has no layers");
  const arch::AttentionBlock* first = nullptr;  // KV shape of the attention layers
  int32_t n_attention = 0;
  for (const auto& L : graph.layers) {
    if (L.recurrent) continue;
    if (!first) first = &L.attn;
    if (L.attn.n_head_kv != first->n_head_kv || L.attn.head_dim != first->head_dim)
      return error(Code::kUnsupported, "attention layers with different KV shapes ({}x{} and {}x{})",
                   first->n_head_kv, first->head_dim, L.attn.n_head_kv, L.attn.head_dim);
    ++n_attention;
  }
  if (!first) return error(Code::kModel, "model has no attention layer");
  const arch::AttentionBlock& a = *first;
  kv::KvShape shape{n_attention, opt.n_ctx, a.n_head_kv, a.head_dim};
  BW24_ASSIGN_OR_RETURN(kv::HostKvCache cache, kv::HostKvCache::create(shape, opt.k_type, opt.v_type, opt.kv_rotate));
  return std::unique_ptr<Runner>(new RefRunner(graph, opt, std::move(cache)));
}

}  // namespace bw24::engine
