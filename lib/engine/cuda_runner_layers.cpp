// The CUDA runner's attention, gated delta-net and dense FFN layers (the class: cuda_runner_impl.h).
#include "lib/engine/cuda_runner_impl.h"

namespace bw24::engine::cuda_runner_detail {

// Q, K and V. Prefill: one GEMM launch. Decode: the int8-path ones that share a type in one
// launch (Q4_K_M keeps some attn_v in Q6_K: then Q and K together and V alone), the rest one by one.
// split: a gated layer's Q product into q_ and attn_gate_ (not when flash decode reads it in place).
absl::Status CudaRunner::qkv(const AttentionBlock& a, const GemvIn& in, int n, bool split) {
  if (ablate(kAblQkv, n)) return absl::OkStatus();
  BW24_RETURN_IF_ERROR(qkv_products(a, in, n));
  if (!a.gated || !split) return absl::OkStatus();
  return cuda_status(cuda::split_q_gate(q_.p, attn_gate_.p, qg_.p, n, a.n_head, a.head_dim, stream_), "q/gate split");
}

absl::Status CudaRunner::qkv_products(const AttentionBlock& a, const GemvIn& in, int n) {
  float* yq = a.gated ? qg_.p : q_.p;
  if (in.bf) return gemm({{&a.wq, yq}, {&a.wk, k_.p}, {&a.wv, v_.p}}, in.bf, n, cuda::GemvOut::kStore);
  const GemmJob jobs[] = {{&a.wq, yq}, {&a.wk, k_.p}, {&a.wv, v_.p}};
  return products(jobs, 3, in, n);
}

// y_i = W_i in for up to four weights over the same input. Decode: the ones that share a type
// and width in launches of up to kMaxGemvSegments (Q4_K_M keeps some attn_v in Q6_K: then Q and K
// together and V alone; a Qwen3.5 delta net's in_qkv / in_z and in_b / in_a: two launches, not
// four, 381.9 -> 396.8 tok/s on the H200; BF16 Q, K and V: one), the rest one by one. Prefill:
// one by one.
absl::Status CudaRunner::products(const GemmJob* jobs, int count, const GemvIn& in, int n) {
  constexpr int kMaxProducts = 4;
  if (count > kMaxProducts) return error(Code::kInternal, "products of {} weights (at most {})", count, kMaxProducts);
  bool done[kMaxProducts] = {};
  // Int8 launches of one token over the same input overlap (cuda::GemvChain): the first waits
  // before it lets the next start, where another int8 launch follows it; the next ones read the
  // input without waiting. At every position: round 34 kept the graph with merge launches (from
  // position 1,024) on the plain chain, where flash decode's history prefetch gained from V's
  // immediate trigger (Qwen3-30B-A3B at depth 4096, next202: plain 463.6 / 462.6, overlapping
  // 457.3 / 457.0). Re-measured on round 64's kernels it gains there: H200, tg128 `-p 16 -d 4096`,
  // alternated (next370): Qwen3-8B 540.0 / 539.8 -> 542.4 / 542.9, q8_0 KV 564.7 -> 568.9,
  // Qwen3-30B-A3B 593.6 -> 598.9, Qwen3.5-9B 578.1 -> 578.9.
  const bool overlap = n == 1 && qkv_overlap();
  bool chained = false;  // the first launch took kWaitFirst
  int launches = 0;
  for (int i = 0; i < count && !in.bf; ++i) {
    const uint32_t type = w_.type_of(jobs[i].w->t);
    const bool q8 = is_q8(*jobs[i].w);
    if (in.q8.norm_parts && !q8)  // fold_target_attention allows none
      return error(Code::kInternal, "'{}': a folded norm's input for a float product", jobs[i].w->t->name);
    if (done[i] || !(q8 || cuda::gemv_supports(type))) continue;
    const int64_t cols = jobs[i].w->cols();
    cuda::GemvSegment segs[cuda::kMaxGemvSegments];
    int n_segs = 0;
    for (int j = i; j < count && n_segs < cuda::kMaxGemvSegments; ++j) {
      if (done[j] || w_.type_of(jobs[j].w->t) != type || jobs[j].w->cols() != cols) continue;
      segs[n_segs++] = {w_.at(jobs[j].w->t), jobs[j].y, jobs[j].w->rows()};
      done[j] = true;
    }
    const bool first = launches++ == 0;
    bool q8_after = false;  // the first launch: an int8 launch follows it
    for (int j = 0; first && j < count; ++j) q8_after = q8_after || (!done[j] && is_q8(*jobs[j].w));
    const cuda::GemvChain chain = !overlap || !q8          ? cuda::GemvChain::kPlain
                                  : first && q8_after      ? cuda::GemvChain::kWaitFirst
                                  : !first && chained      ? cuda::GemvChain::kIndependent
                                                           : cuda::GemvChain::kPlain;
    bool took = false;
    const cudaError_t e =
        q8 ? cuda::gemv_q8_multi(segs, n_segs, nullptr, type, cols, in.q8, n, cuda::GemvOut::kStore, 0, stream_, chain,
                                 &took)
           : cuda::gemv_multi(segs, n_segs, type, cols, in.x, n, cuda::GemvOut::kStore, stream_);
    if (first) chained = took && chain == cuda::GemvChain::kWaitFirst;
    if (e != cudaSuccess) return error(Code::kDevice, "CUDA gemv of '{}': {}", jobs[i].w->t->name, cudaGetErrorString(e));
  }
  for (int i = 0; i < count; ++i)
    if (!done[i]) BW24_RETURN_IF_ERROR(matmul(*jobs[i].w, in, n, jobs[i].y, cuda::GemvOut::kStore));
  return absl::OkStatus();
}

// proj (n x E) into the residual stream: through the block's post-norm if it has one (Gemma),
// else the GEMV adds straight into x_.
absl::Status CudaRunner::output_projection(const arch::Weight& w, const GemvIn& in, const Norm& post_norm, int n,
                                           const cuda::CtaRoom* room) {
  const int E = g_.n_embd;
  const Norm* fold = fold_next_;
  fold_next_ = nullptr;
  folded_ = nullptr;
  if (fold && n == 1 && !post_norm.w && is_q8(w) && !in.q8.norm_parts) {  // also the next norm's input, folded
    const cuda::NormOut out{f32(fold->w), fold->one_plus, fold_q_.p, fold_ds_.p, fold_parts_.p};
    bool written = false;
    const cudaError_t e = cuda::gemv_q8_add_normed(w_.at(w.t), w_.type_of(w.t), w.rows(), w.cols(), in.q8, x_.p, out,
                                                   stream_, room, &written);
    if (e != cudaSuccess) return error(Code::kDevice, "CUDA gemv of '{}': {}", w.t->name, cudaGetErrorString(e));
    if (written) folded_ = fold;
    return absl::OkStatus();
  }
  if (!post_norm.w) return matmul(w, in, n, x_.p, cuda::GemvOut::kAdd, nullptr, 0, nullptr, room);
  BW24_RETURN_IF_ERROR(matmul(w, in, n, proj_.p, cuda::GemvOut::kStore));
  BW24_RETURN_IF_ERROR(norm(post_norm, proj_.p, proj_.p, n, E));
  return cuda_status(cuda::add_inplace(x_.p, proj_.p, int64_t{n} * E, stream_), "residual");
}

absl::Status CudaRunner::attention(const AttentionBlock& a, int layer, int n, cuda::DevicePos pos,
                                   const cuda::CtaRoom& room) {
  const int E = g_.n_embd, D = a.head_dim;
  BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&a.norm, x_.p, n, E));
  // One token through flash decode: that kernel does qk_rope_store's work too (fused_rope), a
  // launch fewer; on a gated layer it also reads q from the Q product in place and applies the
  // output gate as it writes O (fused_o_epilogue): split_q_gate's and sigmoid_mul's launches go.
  const bool flash = cuda::flash_decode_supports(D, a.n_head, a.n_head_kv);
  const bool fuse_rope = opt_.fused_rope && n == 1 && !ablate(kAblRope, n) && !ablate(kAblAttn, n) && flash;
  const bool gate_in_flash = a.gated && fuse_rope && opt_.fused_o_epilogue;
  BW24_RETURN_IF_ERROR(qkv(a, in, n, !gate_in_flash));
  cuda::QkRopeArgs r{};
  r.q = gate_in_flash ? qg_.p : q_.p;
  r.q_stride = gate_in_flash ? 2 * D : 0;  // the Q product's rows per head: [q (D) | gate (D)]
  r.k = k_.p;
  r.v = v_.p;
  r.k_cache = kc_[layer]->p;
  r.v_cache = vc_[layer]->p;
  r.kv_type = kv_types();
  r.n_ctx = opt_.n_ctx;
  r.q_norm = a.q_norm.w ? f32(a.q_norm.w) : nullptr;
  r.k_norm = a.k_norm.w ? f32(a.k_norm.w) : nullptr;
  r.q_one_plus = a.q_norm.one_plus;
  r.k_one_plus = a.k_norm.one_plus;
  r.eps = g_.norm_eps;
  r.n_head = a.n_head;
  r.n_head_kv = a.n_head_kv;
  r.head_dim = D;
  r.rope_dims = a.rope_dims;
  r.theta = a.rope_theta;
  r.inv_freq = inv_freq_[layer]->p;
  r.neox = a.rope_style == arch::RopeStyle::kNeox;
  r.pos = pos;
  // A one-token step: the angles rope_table wrote for this layer at the pass's start.
  if (fuse_rope && rope_table_step(n)) r.angles = rope_angles_.p + int64_t{layer} * rope_stride_;
  if (!fuse_rope && !ablate(kAblRope, n))
    BW24_CUDA_OK(cuda::qk_rope_store(r, n, stream_), "qk norm + rope + kv store");
  const void* kc = kc_[layer]->p;
  const void* vc = vc_[layer]->p;
  // One token (its gate, if any, applied in flash decode), an O projection on the streamed GEMV:
  // flash decode also writes O as that GEMV's int8 input (the writer of each row quantizes it),
  // so the rmsnorm_q8 launch goes (H200, two rounds at -p 16 and -p 512: Qwen3-8B Q4_K_M +2.0 %,
  // Qwen3-30B-A3B -0.4 %). Not before the warp-per-row GEMV: it only prefetches its weights into
  // L2 before its wait, and without the launch between them that prefetch has less time
  // (Qwen3-8B Q8_0 -1.2 %).
  const bool o_q8 = opt_.fused_o_epilogue && n == 1 && (!a.gated || gate_in_flash) && uses_q8_ &&
                    (a.n_head * D) % 32 == 0 && !ablate(kAblAttn, n) && flash &&
                    cuda::gemv_q8_streams(w_.type_of(a.wo.t), cuda::GemvOut::kAdd);  // store, add alike
  const cuda::OutEpilogue o_ep{o_q8 ? act_q_.p : nullptr, o_q8 ? act_ds_.p : nullptr,
                               gate_in_flash ? qg_.p + D : nullptr, gate_in_flash ? 2 * D : 0};
  if (n > kStep && cuda::flash_prefill_supports(D)) {
    BW24_CUDA_OK(cuda::flash_prefill(o_.p, q_.p, kc, vc, kv_types(), n, a.n_head, a.n_head_kv, D, pos,
                                     a.sliding_window, a.scale, opt_.n_ctx, stream_),
                 "flash attention");
  } else {
    // Split-K flash decode (or version 1 for other head shapes); scratch for kStep rows, so
    // longer passes go through in groups. The history below the first group is complete before
    // the pass (every forward ends in a stream synchronization); a later group's is written by
    // the kernels just before it (history_ready false).
    for (int t = 0; t < n && !ablate(kAblAttn, n); t += kStep) {
      const size_t off = size_t(t) * a.n_head * D;
      const int rows = std::min(kStep, n - t);
      const cuda::DevicePos p{pos.dev, pos.base + t};
      const cudaError_t e =
          flash
              ? cuda::flash_decode(o_.p + off, q_.p + off, kc, vc, kv_types(), flash_scratch_.p, rows, a.n_head,
                                   a.n_head_kv, D, p, a.sliding_window, a.scale, opt_.n_ctx, stream_,
                                   fuse_rope ? &r : nullptr, o_ep, step_max_pos_,
                                   forced_head_groups(a.n_head / a.n_head_kv), /*history_ready=*/t == 0)
              : cuda::attention(o_.p + off, q_.p + off, kc, vc, kv_types(), scores_.p, rows, a.n_head, a.n_head_kv, D, p,
                                a.sliding_window, a.scale, opt_.n_ctx, stream_);
      BW24_CUDA_OK(e, "attention");
    }
  }
  if (a.gated && !gate_in_flash)
    BW24_CUDA_OK(cuda::sigmoid_mul(o_.p, attn_gate_.p, int64_t{n} * a.n_head * D, stream_), "attention output gate");
  GemvIn oin{o_.p, {act_q_.p, act_ds_.p}, nullptr};  // o_q8: flash decode wrote it
  if (!o_q8) {
    BW24_ASSIGN_OR_RETURN(oin, prepare(nullptr, o_.p, n, a.n_head * D));
  }
  if (ablate(kAblO, n)) return absl::OkStatus();
  return output_projection(a.wo, oin, a.post_norm, n, &room);
}

absl::Status CudaRunner::check_delta_net(const arch::DeltaNetBlock& b) const {
  const bool ok = b.conv_kernel >= 1 && b.conv_kernel <= 8 && b.d_k % 16 == 0 && b.d_k <= 128 && b.d_v <= 128 &&
                  (b.d_v * 4) % 32 == 0 && b.n_k_heads > 0 && b.n_v_heads % b.n_k_heads == 0;
  if (!ok)
    return error(Code::kUnsupported,
                 "{}: a delta-net shape the CUDA kernels do not take (conv kernel {}, d_k {}, d_v {}, {} / {} heads)",
                 g_.arch, b.conv_kernel, b.d_k, b.d_v, b.n_v_heads, b.n_k_heads);
  return absl::OkStatus();
}

// Per delta-net layer: conv and recurrent state (zeroed), conv taps as f32 [C][K] and -exp(A_log),
// both prepared on the host as lib/ref reads them.
absl::Status CudaRunner::init_delta_net_states() {
  for (size_t il = 0; il < g_.layers.size(); ++il) {
    const arch::Layer& L = g_.layers[il];
    dn_index_.push_back(L.recurrent ? static_cast<int>(dn_states_.size()) : -1);
    if (!L.recurrent) continue;
    const arch::DeltaNetBlock& b = L.delta_net;
    DeltaNetState st;
    const int64_t C = b.conv_dim(), K = b.conv_kernel;
    st.conv_elems = size_t((K - 1) * C);
    st.ssm_elems = size_t(b.n_v_heads) * b.d_k * b.d_v;
    std::vector<float> taps(size_t(C * K)), neg_a(size_t(b.n_v_heads));
    for (int64_t c = 0; c < C; ++c) ref::dequant_row(*b.conv.t, c, &taps[size_t(c * K)]);
    ref::dequant_row(*b.a.t, 0, neg_a.data());
    if (b.a_is_log)
      for (auto& v : neg_a) v = -std::exp(v);
    BW24_RETURN_IF_ERROR(st.conv.alloc(st.conv_elems, "delta-net state"));
    BW24_RETURN_IF_ERROR(st.ssm.alloc(st.ssm_elems, "delta-net state"));
    BW24_RETURN_IF_ERROR(st.taps.alloc(taps.size(), "delta-net conv"));
    BW24_RETURN_IF_ERROR(st.neg_a.alloc(neg_a.size(), "delta-net decay"));
    BW24_RETURN_IF_ERROR(st.turn.alloc(size_t(b.n_k_heads), "delta-net decode counters"));
    BW24_CUDA_OK(cudaMemset(st.turn.p, 0, size_t(b.n_k_heads) * sizeof(unsigned)), "delta-net decode counters");
    BW24_CUDA_OK(cudaMemset(st.conv.p, 0, st.conv_elems * 4), "delta-net state");
    BW24_CUDA_OK(cudaMemset(st.ssm.p, 0, st.ssm_elems * 4), "delta-net state");
    BW24_CUDA_OK(cudaMemcpy(st.taps.p, taps.data(), taps.size() * 4, cudaMemcpyHostToDevice), "delta-net conv");
    BW24_CUDA_OK(cudaMemcpy(st.neg_a.p, neg_a.data(), neg_a.size() * 4, cudaMemcpyHostToDevice), "delta-net decay");
    dn_states_.push_back(std::move(st));
  }
  return absl::OkStatus();
}

// x += out_proj(gated_norm(delta rule(conv(in_qkv h)), in_z h)), as lib/engine/ref_runner.cpp.
absl::Status CudaRunner::delta_net(const arch::DeltaNetBlock& b, size_t il, int n, const cuda::CtaRoom& room) {
  const int E = g_.n_embd;
  const int64_t C = b.conv_dim(), Vd = int64_t{b.n_v_heads} * b.d_v;
  BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&b.norm, x_.p, n, E));
  GemmJob jobs[4] = {{&b.in_qkv, dn_qkv_.p}, {&b.in_z, dn_z_.p}};
  int count = 2;
  if (b.in_ba) {
    jobs[count++] = {&b.in_ba, dn_b_.p};
  } else {
    jobs[count++] = {&b.in_b, dn_b_.p};
    jobs[count++] = {&b.in_a, dn_a_.p};
  }
  BW24_RETURN_IF_ERROR(products(jobs, count, in, n));
  DeltaNetState& st = dn_states_[size_t(dn_index_[il])];
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(b.d_k));
  cuda::GdnStepArgs a{};
  a.out = dn_out_.p;
  a.state = st.ssm.p;
  a.y = dn_y_.p;
  a.z = dn_z_.p;
  a.beta_raw = dn_b_.p;
  a.alpha_raw = b.in_ba ? dn_b_.p : dn_a_.p;
  a.ba_stride = b.in_ba ? 2 * b.n_v_heads : b.n_v_heads;
  a.ba_fused = static_cast<bool>(b.in_ba);
  a.dt_bias = f32(b.dt_bias);
  a.neg_a = st.neg_a.p;
  a.norm_w = f32(b.gated_norm);
  a.eps = g_.norm_eps;
  a.Hk = b.n_k_heads;
  a.Hv = b.n_v_heads;
  a.dk = b.d_k;
  a.dv = b.d_v;
  a.v_heads_tiled = b.v_heads_tiled;
  // A GEMV pass: the conv, the recurrence and the out_proj's int8 input in one launch.
  if (opt_.fused_delta_net && n <= kStep && cuda::gdn_decode_supports(n, b.n_k_heads, b.n_v_heads, b.d_k, b.d_v, b.conv_kernel)) {
    const bool q8 = uses_q8_ && Vd % 32 == 0;
    const cuda::GdnDecodeArgs f{a,         dn_qkv_.p, st.conv.p, st.taps.p, b.conv_kernel, q_scale,
                                st.turn.p, q8 ? act_q_.p : nullptr, q8 ? act_ds_.p : nullptr, step_hold_};
    BW24_CUDA_OK(cuda::gdn_decode(f, n, stream_), "delta-net decode step");
    return output_projection(b.out_proj, GemvIn{dn_out_.p, {act_q_.p, act_ds_.p}, nullptr}, Norm{}, n, &room);
  }
  BW24_CUDA_OK(cuda::gdn_conv(dn_y_.p, st.conv.p, dn_qkv_.p, st.taps.p, n, C, b.conv_kernel, b.n_k_heads, b.d_k, q_scale,
                              stream_),
               "delta-net conv");
  BW24_CUDA_OK(cuda::gdn_step(a, n, stream_), "delta-net step");
  BW24_ASSIGN_OR_RETURN(const GemvIn oin, prepare(nullptr, dn_out_.p, n, static_cast<int>(Vd)));
  return output_projection(b.out_proj, oin, Norm{}, n, &room);
}

// y = act(gate in) * up in for a gated MLP's first half (GEMV; routed over stacked experts with
// `routing`): one fused launch when both are int8-path weights of one type; up_buf is scratch for
// the unfused case.
absl::Status CudaRunner::gate_up(const arch::Weight& gate, const arch::Weight& up, const GemvIn& in, int n, float* y,
                                 float* up_buf, int act, const Routing* routing) {
  if (is_q8(gate) && w_.type_of(gate.t) == w_.type_of(up.t))
    return matmul(gate, in, n, y, cuda::GemvOut::kGateUp, &up, act, routing);
  BW24_RETURN_IF_ERROR(matmul(gate, in, n, y, cuda::GemvOut::kStore, nullptr, 0, routing));
  BW24_RETURN_IF_ERROR(matmul(up, in, n, up_buf, cuda::GemvOut::kStore, nullptr, 0, routing));
  const int64_t rows_out = routing ? routing->pairs : n;
  return cuda_status(cuda::gated_act(y, y, up_buf, rows_out * gate.rows(), act, stream_), "activation");
}

absl::Status CudaRunner::mlp(const MlpBlock& m, int n) {
  if (m.is_moe()) return ablate(kAblMoe, n) ? absl::OkStatus() : moe(m, n);
  const int E = g_.n_embd;
  const int64_t F = m.gate.rows();
  const int act = m.act == arch::Activation::kSilu ? 0 : 1;
  BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&m.norm, x_.p, n, E));
  if (in.bf) {  // prefill: gate and up in one GEMM launch, the activation writes the down GEMM's bf16 input
    BW24_RETURN_IF_ERROR(gemm({{&m.gate, gate_.p}, {&m.up, up_.p}}, in.bf, n, cuda::GemvOut::kStore));
    BW24_CUDA_OK(cuda::gated_act_bf16(act_bf_.p, gate_.p, up_.p, n * F, act, stream_), "activation");
    return output_projection(m.down, GemvIn{nullptr, {}, act_bf_.p}, m.post_norm, n);
  }
  // One token: the gate-up writes the down's int8 input itself where it can (cuda::gemv_q8_gate_up_q8),
  // into act_q_'s second row (a one-token pass reads only the first, the gate-up's own input).
  bool q8_written = false;
  const bool q8_out = n == 1 && uses_q8_ && is_q8(m.gate) && w_.type_of(m.gate.t) == w_.type_of(m.up.t) &&
                      F % 32 == 0 && act_row_ % 32 == 0 && chunk_ > 1;
  int8_t* dq = act_q_.p + act_row_;
  float2* dds = act_ds_.p + act_row_ / 32;
  if (!ablate(kAblGateUp, n)) {
    if (q8_out)
      BW24_CUDA_OK(cuda::gemv_q8_gate_up_q8(w_.at(m.gate.t), w_.at(m.up.t), w_.type_of(m.gate.t), F, m.gate.cols(),
                                            in.q8, gate_.p, act, dq, dds, stream_, &q8_written),
                   "gate-up GEMV with its int8 output");
    else
      BW24_RETURN_IF_ERROR(gate_up(m.gate, m.up, in, n, gate_.p, up_.p, act));
  }
  GemvIn din{gate_.p, {dq, dds}, nullptr};
  if (!q8_written) {
    BW24_ASSIGN_OR_RETURN(din, prepare(nullptr, gate_.p, n, static_cast<int>(F)));
  }
  if (ablate(kAblDown, n)) return absl::OkStatus();
  return output_projection(m.down, din, m.post_norm, n);
}

}  // namespace bw24::engine::cuda_runner_detail
