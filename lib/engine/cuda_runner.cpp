// The CUDA runner's set-up, passes, captured step, run-ahead queue, GEMV / GEMM dispatch and weight
// expansion (the class: cuda_runner_impl.h).
#include "lib/engine/cuda_runner_impl.h"

namespace bw24::engine::cuda_runner_detail {

absl::Status CudaRunner::init() {
  BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
  BW24_CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
  int64_t qw = 0, kw = 0, ff = 0, scratch = 0;
  gemm_ = true;
  // f32_ok: a router, which the GEMM takes in F32 too (expanded to bf16 like a quantized weight).
  auto check = [&](const arch::Weight& wt, bool f32_ok = false) -> absl::Status {
    if (!wt) return absl::OkStatus();
    const uint32_t type = w_.type_of(wt.t);
    const bool gemm_type = f32_ok ? cuda::dequant_bf16_supports(type) : cuda::gemm_supports(type);
    if (&wt != &g_.output)  // the logits stay on the GEMV (a few rows)
      gemm_ = gemm_ && gemm_type && wt.cols() % 256 == 0;
    if (cuda::gemv_q8_supports(type)) {
      uses_q8_ = true;
      return absl::OkStatus();
    }
    if (cuda::gemv_supports(type)) return absl::OkStatus();
    return error(Code::kUnsupported, "tensor '{}' has type {}, which the CUDA GEMV does not handle yet", wt.t->name,
                 type_name(type));
  };
  int64_t vd = 0, conv_c = 0, ba = 0;
  auto scratch_for = [&](std::initializer_list<const arch::Weight*> group) {  // one GEMM launch's expansion
    int64_t elems = 0;
    for (const arch::Weight* wt : group) elems += expanded_elems(*wt);
    scratch = std::max(scratch, elems);
  };
  for (const auto& L : g_.layers) {
    if (L.recurrent) {
      BW24_RETURN_IF_ERROR(check_delta_net(L.delta_net));
      const arch::DeltaNetBlock& b = L.delta_net;
      vd = std::max<int64_t>(vd, int64_t{b.n_v_heads} * b.d_v);
      conv_c = std::max<int64_t>(conv_c, b.conv_dim());
      ba = std::max<int64_t>(ba, 2 * int64_t{b.n_v_heads});
      for (const arch::Weight* wt : {&b.in_qkv, &b.in_z, &b.in_b, &b.in_a, &b.in_ba, &b.out_proj}) {
        BW24_RETURN_IF_ERROR(check(*wt));
        scratch_for({wt});
      }
    } else {
      qw = std::max<int64_t>(qw, int64_t{L.attn.n_head} * L.attn.head_dim);
      any_gated_ = any_gated_ || L.attn.gated;
      kw = std::max<int64_t>(kw, int64_t{L.attn.n_head_kv} * L.attn.head_dim);
      if (L.attn.head_dim > cuda::kMaxHeadDim)
        return error(Code::kUnsupported, "head_dim {} is larger than the CUDA runner's {}", L.attn.head_dim,
                     cuda::kMaxHeadDim);
      for (const arch::Weight* wt : {&L.attn.wq, &L.attn.wk, &L.attn.wv, &L.attn.wo}) BW24_RETURN_IF_ERROR(check(*wt));
      scratch_for({&L.attn.wq, &L.attn.wk, &L.attn.wv});
      scratch_for({&L.attn.wo});
    }
    const MlpBlock& m = L.mlp;
    if (m.is_moe()) {
      const arch::MoeBlock& e = m.moe;
      BW24_RETURN_IF_ERROR(check(e.router, true));
      for (const arch::Weight* wt : {&e.gate_exps, &e.up_exps, &e.down_exps}) BW24_RETURN_IF_ERROR(check(*wt));
      BW24_RETURN_IF_ERROR(check_moe(e));
      moe_.experts = std::max(moe_.experts, e.n_expert);
      moe_.used = std::max(moe_.used, e.n_used);
      moe_.ff = std::max(moe_.ff, e.gate_exps.rows());
      scratch_for({&e.router});
      // The grouped GEMM expands experts a group at a time: the whole stack when it fits.
      scratch = std::max(scratch, e.n_expert * expert_elems({&e.gate_exps, &e.up_exps}));
      if (e.shared_gate_inp) {
        ff = std::max(ff, e.shared_gate.rows());
        BW24_RETURN_IF_ERROR(check(e.shared_gate_inp, true));
        for (const arch::Weight* wt : {&e.shared_gate, &e.shared_up, &e.shared_down}) BW24_RETURN_IF_ERROR(check(*wt));
        scratch_for({&e.shared_gate_inp});
        scratch_for({&e.shared_gate, &e.shared_up});
        scratch_for({&e.shared_down});
      }
      continue;
    }
    ff = std::max<int64_t>(ff, m.gate.rows());
    for (const arch::Weight* wt : {&m.gate, &m.up, &m.down}) BW24_RETURN_IF_ERROR(check(*wt));
    scratch_for({&m.gate, &m.up});
    scratch_for({&m.down});
  }
  BW24_RETURN_IF_ERROR(check(g_.output));
  gemm_ = gemm_ && opt_.prefill_gemm;
  kv_width_ = kw;
  const size_t E = static_cast<size_t>(g_.n_embd);
  // The widest GEMV input: also the routed down projection's kStep x used rows of ff each.
  const size_t widest = std::max<size_t>({E, size_t(qw), size_t(ff), size_t(vd), size_t(moe_.used * moe_.ff)});
  chunk_ = gemm_ ? kChunk : kStep;
  const size_t C = static_cast<size_t>(chunk_);
  if (gemm_) {
    scratch_elems_ = std::min(scratch, opt_.gemm_scratch_elems > 0 ? opt_.gemm_scratch_elems : kScratchElems);
    BW24_RETURN_IF_ERROR(act_bf_.alloc(C * widest, "activations"));
    BW24_RETURN_IF_ERROR(wscratch_.alloc(static_cast<size_t>(scratch_elems_), "weight expansion scratch"));
    BW24_RETURN_IF_ERROR(init_ahead());
  }
  BW24_RETURN_IF_ERROR(emb_.alloc(C * E, "pinned embeddings"));
  BW24_RETURN_IF_ERROR(pos_host_.alloc(1, "pinned position"));
  BW24_RETURN_IF_ERROR(token_host_.alloc(1, "pinned token"));
  BW24_RETURN_IF_ERROR(token_dev_.alloc(1, "token"));
  BW24_RETURN_IF_ERROR(pos_dev_.alloc(1, "position"));
  BW24_RETURN_IF_ERROR(x_.alloc(C * E, "activations"));
  BW24_RETURN_IF_ERROR(h_.alloc(C * E, "activations"));  // normed rows are n_embd wide
  BW24_RETURN_IF_ERROR(proj_.alloc(C * E, "activations"));
  BW24_RETURN_IF_ERROR(q_.alloc(C * qw, "activations"));
  BW24_RETURN_IF_ERROR(k_.alloc(C * kw, "activations"));
  BW24_RETURN_IF_ERROR(v_.alloc(C * kw, "activations"));
  BW24_RETURN_IF_ERROR(o_.alloc(C * qw, "activations"));
  BW24_RETURN_IF_ERROR(gate_.alloc(C * ff, "activations"));
  BW24_RETURN_IF_ERROR(up_.alloc(C * ff, "activations"));
  // int8 rows for the GEMV (kStep) and, in prefill, for the int8 grouped expert GEMM (a pass).
  act_row_ = widest;
  BW24_RETURN_IF_ERROR(act_q_.alloc(C * widest, "activations"));
  BW24_RETURN_IF_ERROR(act_ds_.alloc(C * widest / 32 + 1, "activations"));
  if (uses_q8_ && E % 32 == 0) {  // a one-token step's folded norm inputs (fold_next_)
    BW24_RETURN_IF_ERROR(fold_q_.alloc(size_t(E), "activations"));
    BW24_RETURN_IF_ERROR(fold_ds_.alloc(size_t(E / 32), "activations"));
    BW24_RETURN_IF_ERROR(fold_parts_.alloc(size_t(E / 16), "activations"));
  }
  for (const arch::Layer& L : g_.layers) {  // which norms a one-token step folds, decided once
    fold_mlp_.push_back(fold_target_mlp(L.mlp));
    fold_attn_.push_back(fold_target_attention(L));
  }
  BW24_RETURN_IF_ERROR(logits_.alloc(kStep * static_cast<size_t>(g_.n_vocab), "logits"));
  BW24_RETURN_IF_ERROR(init_step_queue());
  if (any_gated_) {  // gated attention: wq rows are [q (D) | gate (D)] per head, split after the product
    BW24_RETURN_IF_ERROR(qg_.alloc(C * 2 * qw, "activations"));
    BW24_RETURN_IF_ERROR(attn_gate_.alloc(C * qw, "activations"));
  }
  if (moe_.experts > 0) {  // router logits, routes, routed activations and expert outputs
    if (gemm_ && moe_.experts > cuda::kMoeMaxExperts)
      return error(Code::kUnsupported, "{}: {} experts (the CUDA grouping kernel takes up to {})", g_.arch,
                   moe_.experts, cuda::kMoeMaxExperts);
    const size_t pairs = C * moe_.used;
    BW24_RETURN_IF_ERROR(moe_.logits.alloc(C * moe_.experts, "activations"));
    BW24_RETURN_IF_ERROR(moe_.ids.alloc(pairs, "activations"));
    // Expert 0 until a router writes them (BW24_ABLATE=moegate reads them without a router).
    BW24_CUDA_OK(cudaMemset(moe_.ids.p, 0, pairs * sizeof(int32_t)), "MoE routes");
    BW24_RETURN_IF_ERROR(moe_.weights.alloc(pairs, "activations"));
    BW24_RETURN_IF_ERROR(moe_.gate.alloc(pairs * moe_.ff, "activations"));
    BW24_RETURN_IF_ERROR(moe_.up.alloc(pairs * moe_.ff, "activations"));
    BW24_RETURN_IF_ERROR(moe_.out.alloc(pairs * E, "activations"));
    BW24_RETURN_IF_ERROR(moe_.shared_gate.alloc(C, "activations"));
    BW24_RETURN_IF_ERROR(moe_.gate_counter.alloc(1, "activations"));
    BW24_CUDA_OK(cudaMemset(moe_.gate_counter.p, 0, sizeof(unsigned)), "MoE gate counter");  // moe_gate keeps it 0
    if (gemm_) {  // the grouped GEMM's tables (cuda/moe moe_group)
      BW24_RETURN_IF_ERROR(moe_.sorted.alloc(pairs, "activations"));
      BW24_RETURN_IF_ERROR(moe_.offsets.alloc(size_t(moe_.experts) + 1, "activations"));
      BW24_RETURN_IF_ERROR(moe_.tile_start.alloc(size_t(moe_.experts) + 1, "activations"));
      BW24_RETURN_IF_ERROR(moe_.tiles.alloc(pairs / cuda::kGemmGroupRows + size_t(moe_.experts), "activations"));
    }
  }
  if (vd > 0) {  // delta-net layers: projections, conv output, gated-norm output, and the states
    BW24_RETURN_IF_ERROR(dn_qkv_.alloc(C * conv_c, "activations"));
    BW24_RETURN_IF_ERROR(dn_y_.alloc(C * conv_c, "activations"));
    BW24_RETURN_IF_ERROR(dn_z_.alloc(C * vd, "activations"));
    BW24_RETURN_IF_ERROR(dn_out_.alloc(C * vd, "activations"));
    BW24_RETURN_IF_ERROR(dn_b_.alloc(C * ba, "activations"));
    BW24_RETURN_IF_ERROR(dn_a_.alloc(C * ba, "activations"));
    BW24_RETURN_IF_ERROR(init_delta_net_states());
  }
  int max_heads = 0, max_dim = 0;
  bool all_flash = true;
  for (const auto& L : g_.layers) {
    if (L.recurrent) continue;
    max_heads = std::max(max_heads, L.attn.n_head);
    max_dim = std::max(max_dim, L.attn.head_dim);
    all_flash = all_flash && cuda::flash_decode_supports(L.attn.head_dim, L.attn.n_head, L.attn.n_head_kv);
  }
  BW24_RETURN_IF_ERROR(
      flash_scratch_.alloc(size_t(cuda::flash_decode_scratch(opt_.n_ctx, kStep, max_heads, max_dim)), "attention scratch"));
  BW24_CUDA_OK(cuda::flash_decode_init_scratch(flash_scratch_.p), "attention scratch");
  // The version-1 kernel's score rows, only for head shapes the flash kernels do not take.
  if (!all_flash) BW24_RETURN_IF_ERROR(scores_.alloc(size_t(kStep) * max_heads * opt_.n_ctx, "attention scratch"));
  for (kv::KvType t : {opt_.k_type, opt_.v_type})
    if (cuda::kv_blocked(device_kv_type(t)))
      for (const auto& L : g_.layers)
        if (!L.recurrent && L.attn.head_dim % 32 != 0)
          return error(Code::kUnsupported, "a {} KV cache needs head_dim to be a multiple of 32 (it is {})",
                       kv::kv_type_name(t), L.attn.head_dim);
  // RoPE frequencies per layer, as lib/ref computes them (std::pow in double), and the layer's
  // entry of a one-token step's angle table (cuda::rope_table; recurrent layers rope nothing).
  std::vector<cuda::RopeTableLayer> rope_layers;
  rope_stride_ = 1;
  for (const auto& L : g_.layers) {
    std::vector<double> f(static_cast<size_t>(std::max(1, L.attn.rope_dims / 2)));
    for (int i = 0; i < L.attn.rope_dims / 2; ++i)
      f[size_t(i)] = std::pow(static_cast<double>(L.attn.rope_theta), -2.0 * i / L.attn.rope_dims);
    inv_freq_.push_back(std::make_unique<DeviceArray<double>>());
    BW24_RETURN_IF_ERROR(inv_freq_.back()->alloc(f.size(), "rope table"));
    BW24_CUDA_OK(cudaMemcpy(inv_freq_.back()->p, f.data(), f.size() * sizeof(double), cudaMemcpyHostToDevice),
                 "rope table");
    const int rope_dims = L.recurrent ? 0 : L.attn.rope_dims;
    rope_layers.push_back({inv_freq_.back()->p, L.attn.rope_theta, rope_dims});
    rope_stride_ = std::max<int64_t>(rope_stride_, rope_dims / 2);
  }
  BW24_RETURN_IF_ERROR(rope_layers_.alloc(rope_layers.size(), "rope table"));
  BW24_CUDA_OK(cudaMemcpy(rope_layers_.p, rope_layers.data(), rope_layers.size() * sizeof(cuda::RopeTableLayer),
                          cudaMemcpyHostToDevice),
               "rope table");
  BW24_RETURN_IF_ERROR(rope_angles_.alloc(size_t(rope_stride_) * rope_layers.size(), "rope table"));
  kc_.resize(g_.layers.size());
  vc_.resize(g_.layers.size());
  for (size_t l = 0; l < g_.layers.size(); ++l) {
    kc_[l] = std::make_unique<DeviceArray<uint8_t>>();
    vc_[l] = std::make_unique<DeviceArray<uint8_t>>();
    const size_t rows = g_.layers[l].recurrent ? 0 : size_t(opt_.n_ctx);  // delta nets keep no KV
    BW24_RETURN_IF_ERROR(kc_[l]->alloc(size_t(cuda::kv_cache_bytes(kv_types().k, int64_t(rows), kw)), "KV cache"));
    BW24_RETURN_IF_ERROR(vc_[l]->alloc(size_t(cuda::kv_cache_bytes(kv_types().v, int64_t(rows), kw)), "KV cache"));
  }
  return absl::OkStatus();
}

// The last forward's last row is logits_'s first (pass() computes it last; the captured step
// writes it there).
absl::Status CudaRunner::last_logits(float* out) {
  BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
  const float* row = logits_kept_ ? logits_keep_.p : logits_.p;
  BW24_CUDA_OK(cudaMemcpyAsync(out, row, size_t(g_.n_vocab) * 4, cudaMemcpyDeviceToHost, stream_), "logits");
  return cuda_status(cudaStreamSynchronize(stream_), "logits");
}

uint64_t CudaRunner::state_bytes() const {
  uint64_t n = 0;
  for (const auto& L : g_.layers)
    if (!L.recurrent)
      n += uint64_t(cuda::kv_cache_bytes(kv_types().k, opt_.n_ctx, kv_width_) +
                    cuda::kv_cache_bytes(kv_types().v, opt_.n_ctx, kv_width_));
  for (const auto& st : dn_states_) n += (st.conv_elems + st.ssm_elems) * 4;
  return n;
}

void CudaRunner::reset() {
  cudaSetDevice(w_.device());
  for (auto& st : dn_states_) {
    cudaMemsetAsync(st.conv.p, 0, st.conv_elems * 4, stream_);
    cudaMemsetAsync(st.ssm.p, 0, st.ssm_elems * 4, stream_);
  }
  cudaStreamSynchronize(stream_);
  state_pos_ = 0;
}

absl::Status CudaRunner::forward(const ForwardRequest& req) {
  BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
  if (recurrent() && req.pos != state_pos_)
    return error(Code::kState, "the recurrent state is at position {}, not {}", state_pos_, req.pos);
  if (queued_ > 0) return error(Code::kState, "{} decode steps are still queued", queued_);
  logits_kept_ = false;
  BW24_RETURN_IF_ERROR(forward_passes(req));
  state_pos_ = req.pos + req.n;
  return absl::OkStatus();
}

// A queued step is set_step (a host token) or nothing (the previous step's choice wrote the
// token, the position and the hold flag: cuda::StepNext), the captured step, the choice with
// StepNext for the step behind (which also stores the choice into its pinned ring_ slot), and
// an event. The host then waits on the older step's event while the newer one is already on the
// stream.
bool CudaRunner::can_queue_steps(bool armed) const {
  return device_embed_ && opt_.run_ahead && run_ahead_on() && (!recurrent() || delta_nets_hold_) &&
         (!armed || opt_.stop_tokens.size() <= size_t(cuda::kStepMaxStops));
}

absl::Status CudaRunner::queue_step(const QueuedStep& s) {
  BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
  if (!can_queue_steps(s.stop_armed)) return error(Code::kState, "this session does not queue decode steps");
  if (queued_ == 2) return error(Code::kState, "two decode steps are queued already");
  const int64_t expected = queued_ > 0 ? ring_pos_[(ring_head_ + queued_ - 1) % 2] + 1 : state_pos_;
  if (s.token < 0 && queued_ == 0) return error(Code::kState, "no queued step chooses this step's token");
  if ((recurrent() || s.token < 0) && s.pos != expected)
    return error(Code::kState, "a decode step at position {} queued after position {}", s.pos, expected - 1);
  logits_kept_ = false;
  const int regime = s.pos < cuda::kFlashDecodeMergeFrom ? 0 : 1;
  if (!graph_exec_[regime]) {  // first use: captured on an idle stream (once a session and regime)
    BW24_CUDA_OK(cudaStreamSynchronize(stream_), "decode step");
    BW24_RETURN_IF_ERROR(capture_step(regime));
  }
  if (s.token >= 0)
    BW24_CUDA_OK(cuda::set_step(token_dev_.p, s.token, pos_dev_.p, s.pos, hold_dev_.p, stream_), "step");
  BW24_CUDA_OK(cudaGraphLaunch(graph_exec_[regime], stream_), "graph launch");
  const int slot = (ring_head_ + queued_) % 2;
  cuda::StepNext next = s.stop_armed ? armed_next_ : cuda::StepNext{};
  if (!token_copy_on()) next.host_choice = ring_.p + slot;  // stored by the choice kernel itself
  next.pos = pos_dev_.p;
  next.pos_value = s.pos + 1;
  next.hold = hold_dev_.p;
  if (const DeviceSampling* d = s.sample)
    BW24_CUDA_OK(cuda::sample_top_k(token_dev_.p, logits_.p, g_.n_vocab, {d->temperature, d->top_k, d->top_p, d->min_p},
                                    d->u, stream_, next),
                 "sampling");
  else
    BW24_CUDA_OK(cuda::argmax(token_dev_.p, logits_.p, g_.n_vocab, stream_, next), "argmax");
  if (token_copy_on())
    BW24_CUDA_OK(cudaMemcpyAsync(ring_.p + slot, token_dev_.p, 4, cudaMemcpyDeviceToHost, stream_), "token");
  BW24_CUDA_OK(cudaEventRecord(ring_done_[slot], stream_), "event");
  ring_pos_[slot] = s.pos;
  ++queued_;
  return absl::OkStatus();
}

absl::Status CudaRunner::finish_step(int32_t* choice) {
  BW24_ASSIGN_OR_RETURN(const int slot, oldest_step());
  *choice = *static_cast<volatile const int32_t*>(ring_.p + slot);
  state_pos_ = ring_pos_[slot] + 1;
  return absl::OkStatus();
}

absl::Status CudaRunner::drop_step() {
  BW24_RETURN_IF_ERROR(oldest_step().status());
  logits_kept_ = true;  // the held step saved its predecessor's row into logits_keep_
  return absl::OkStatus();
}

void CudaRunner::abandon_steps() {
  cudaSetDevice(w_.device());
  cudaStreamSynchronize(stream_);
  queued_ = 0;
  logits_kept_ = false;
}

// Waits for the oldest queued step and takes it off the ring: its slot.
absl::StatusOr<int> CudaRunner::oldest_step() {
  if (queued_ == 0) return error(Code::kState, "no decode step is queued");
  BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
  const int slot = ring_head_;
  BW24_CUDA_OK(cudaEventSynchronize(ring_done_[slot]), "decode step");
  ring_head_ = (ring_head_ + 1) % 2;
  --queued_;
  return slot;
}

// The step queue's buffers, where the captured step can gather its own embedding row: the table
// on the device (DeviceWeights keeps an untied one there when embed_token takes its type) and,
// on a hybrid, every delta-net layer on gdn_decode (the launch that honours the hold flag).
absl::Status CudaRunner::init_step_queue() {
  const arch::Weight& te = g_.tok_embd;
  device_embed_ = opt_.cuda_graph && te && w_.at(te.t) && cuda::embed_supports(w_.type_of(te.t), g_.n_embd);
  delta_nets_hold_ = opt_.fused_delta_net;
  for (const auto& L : g_.layers)
    if (L.recurrent)
      delta_nets_hold_ = delta_nets_hold_ && cuda::gdn_decode_supports(1, L.delta_net.n_k_heads, L.delta_net.n_v_heads,
                                                                       L.delta_net.d_k, L.delta_net.d_v,
                                                                       L.delta_net.conv_kernel);
  if (!device_embed_) return absl::OkStatus();
  BW24_RETURN_IF_ERROR(hold_dev_.alloc(1, "step hold flag"));
  BW24_CUDA_OK(cudaMemset(hold_dev_.p, 0, sizeof(int32_t)), "step hold flag");
  BW24_RETURN_IF_ERROR(logits_keep_.alloc(size_t(g_.n_vocab), "logits"));
  BW24_RETURN_IF_ERROR(ring_.alloc(2, "pinned tokens"));
  const size_t n_stops = std::min(opt_.stop_tokens.size(), size_t(cuda::kStepMaxStops));  // more: never armed
  armed_next_.n_stops = static_cast<int32_t>(n_stops);
  std::copy_n(opt_.stop_tokens.begin(), n_stops, armed_next_.stops);
  for (cudaEvent_t& ev : ring_done_) BW24_CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "event");
  return absl::OkStatus();
}

absl::Status CudaRunner::forward_passes(const ForwardRequest& req) {
  const int64_t V = g_.n_vocab;
  if (req.n == 1 && opt_.cuda_graph) {
    // The graph's first node gathers the token's row on the device, or copies emb_ and pos_host_ up.
    if (device_embed_) {
      BW24_CUDA_OK(cuda::set_step(token_dev_.p, req.tokens[0], pos_dev_.p, req.pos, hold_dev_.p, stream_), "step");
    } else {
      embed_tokens(g_, req.tokens, 1, emb_.p);
      *pos_host_.p = req.pos;
    }
    const int regime = req.pos < cuda::kFlashDecodeMergeFrom ? 0 : 1;  // see graph_exec_
    if (!graph_exec_[regime]) BW24_RETURN_IF_ERROR(capture_step(regime));
    if (req.cancel && req.cancel->load(std::memory_order_relaxed)) return error(Code::kCancelled, "cancelled");
    for (int k = 0; k < graph_replays(); ++k)
      BW24_CUDA_OK(cudaGraphLaunch(graph_exec_[regime], stream_), "graph launch");
    if (req.argmax) return read_token(logits_.p, req);
    BW24_CUDA_OK(cudaMemcpyAsync(req.logits, logits_.p, size_t(V) * 4, cudaMemcpyDeviceToHost, stream_), "logits");
    BW24_CUDA_OK(cudaStreamSynchronize(stream_), "forward");
    return absl::OkStatus();
  }
  const bool argmax = req.argmax && !req.all_logits;
  for (int32_t done = 0; done < req.n;) {
    const int n = std::min<int32_t>(req.n - done > kStep ? chunk_ : kStep, req.n - done);
    const bool last = done + n == req.n;
    // emb_ is pinned: the previous pass's copy must have left it before it is refilled.
    if (done > 0) BW24_CUDA_OK(cudaStreamSynchronize(stream_), "forward");
    embed_tokens(g_, req.tokens + done, n, emb_.p);
    if (req.cancel && req.cancel->load(std::memory_order_relaxed)) return error(Code::kCancelled, "cancelled");
    const int first = req.all_logits ? 0 : last ? n - 1 : n;  // rows whose logits are wanted
    float* dst = argmax ? nullptr : req.logits + (req.all_logits ? size_t(done) * V : 0);
    BW24_RETURN_IF_ERROR(pass(n, cuda::DevicePos{nullptr, req.pos + done}, first, dst));
    done += n;
  }
  if (argmax) return read_token(logits_.p, req);  // the last row is logits_'s first
  BW24_CUDA_OK(cudaStreamSynchronize(stream_), "forward");
  return absl::OkStatus();
}

// One pass of n tokens (n > kStep: a prefill pass on the GEMM): embedding upload, every layer,
// and the logits of rows [first, n), kStep rows at a time through logits_, each group copied to
// logits_host (null: one row, left in logits_; the captured step).
absl::Status CudaRunner::pass(int n, cuda::DevicePos pos, int first, float* logits_host) {
  const int64_t E = g_.n_embd;
  if (step_hold_)  // the captured step of a device-side embedding (init_step_queue)
    BW24_CUDA_OK(cuda::embed_token({x_.p, w_.at(g_.tok_embd.t), w_.type_of(g_.tok_embd.t), g_.tok_embd.rows(), E,
                                    g_.embd_scale, token_dev_.p, hold_dev_.p, logits_.p, logits_keep_.p, g_.n_vocab},
                                   stream_),
                 "embedding");
  else
    BW24_CUDA_OK(cudaMemcpyAsync(x_.p, emb_.p, size_t(n * E) * 4, cudaMemcpyHostToDevice, stream_), "upload");
  if (rope_table_step(n))
    BW24_CUDA_OK(cuda::rope_table(rope_angles_.p, rope_stride_, rope_layers_.p, static_cast<int>(g_.layers.size()), pos,
                                  stream_),
                 "rope table");
  folded_ = nullptr;
  for (size_t il = 0; il < g_.layers.size(); ++il) {
    const arch::Layer& L = g_.layers[il];
    const cuda::CtaRoom room = router_room(L.mlp, n);
    // One token: the mixer's output projection may write the FFN norm's input, a dense down the next
    // layer's attention norm's (fold_next_).
    fold_next_ = n == 1 ? fold_mlp_[il] : nullptr;
    if (L.recurrent) {
      if (!ablate(kAblDeltaNet, n)) BW24_RETURN_IF_ERROR(delta_net(L.delta_net, il, n, room));
    } else {
      BW24_RETURN_IF_ERROR(attention(L.attn, static_cast<int>(il), n, pos, room));
    }
    fold_next_ = n == 1 && !L.mlp.is_moe() && il + 1 < g_.layers.size() ? fold_attn_[il + 1] : nullptr;
    BW24_RETURN_IF_ERROR(mlp(L.mlp, n));
  }
  fold_next_ = nullptr;
  const int64_t V = g_.n_vocab;
  for (int r = first; r < n; r += kStep) {
    const int rows = std::min(kStep, n - r);
    BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&g_.output_norm, x_.p + r * E, rows, static_cast<int>(E)));
    if (!ablate(kAblLmHead, rows)) BW24_RETURN_IF_ERROR(matmul(g_.output, in, rows, logits_.p, cuda::GemvOut::kStore));
    if (logits_host)
      BW24_CUDA_OK(cudaMemcpyAsync(logits_host + size_t(r - first) * V, logits_.p, size_t(rows) * V * 4,
                                   cudaMemcpyDeviceToHost, stream_),
                   "logits");
  }
  return cuda_status(cudaGetLastError(), "pass");
}

// *req.argmax = the argmax of the logits row at dev, or the token sampled from it
// (req.sample), stored by the kernel into pinned memory too (StepNext::host_choice, as a queued
// step's; BW24_TOKEN_COPY=1: a 4-byte copy behind it instead).
absl::Status CudaRunner::read_token(const float* dev, const ForwardRequest& req) {
  static_assert(kDeviceSampleMaxTopK == cuda::kSampleMaxTopK, "one limit for the session and the kernel");
  int32_t* host = req.argmax;
  cuda::StepNext next;
  if (!token_copy_on()) next.host_choice = token_host_.p;
  if (const DeviceSampling* s = req.sample)
    BW24_CUDA_OK(cuda::sample_top_k(token_dev_.p, dev, g_.n_vocab, {s->temperature, s->top_k, s->top_p, s->min_p},
                                    s->u, stream_, next),
                 "sampling");
  else
    BW24_CUDA_OK(cuda::argmax(token_dev_.p, dev, g_.n_vocab, stream_, next), "argmax");
  if (token_copy_on())
    BW24_CUDA_OK(cudaMemcpyAsync(token_host_.p, token_dev_.p, 4, cudaMemcpyDeviceToHost, stream_), "token");
  BW24_CUDA_OK(cudaStreamSynchronize(stream_), "forward");
  *host = *token_host_.p;
  return absl::OkStatus();
}

// Capture the one-token pass (position read from pos_dev_) into graph_exec_[regime].
absl::Status CudaRunner::capture_step(int regime) {
  BW24_CUDA_OK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "graph capture");
  step_max_pos_ = regime == 0 ? cuda::kFlashDecodeMergeFrom - 1 : -1;
  step_hold_ = device_embed_ ? hold_dev_.p : nullptr;
  absl::Status st = [&]() -> absl::Status {
    if (!device_embed_)  // else set_step or the previous step's choice (StepNext) wrote it
      BW24_CUDA_OK(cudaMemcpyAsync(pos_dev_.p, pos_host_.p, sizeof(int64_t), cudaMemcpyHostToDevice, stream_),
                   "position");
    return pass(1, cuda::DevicePos{pos_dev_.p, 0}, 0, nullptr);
  }();
  step_max_pos_ = -1;
  step_hold_ = nullptr;
  cudaGraphExec_t& graph_exec = graph_exec_[regime];
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  if (st.ok()) st = cuda_status(end, "graph capture");
  if (st.ok()) st = cuda_status(cudaGraphInstantiate(&graph_exec, graph, 0), "graph instantiate");
  if (graph) cudaGraphDestroy(graph);
  if (!st.ok()) {
    cudaGetLastError();  // clear the sticky launch error of a failed capture, if any
    graph_exec = nullptr;
  }
  return st;
}

int64_t CudaRunner::expert_elems(std::initializer_list<const arch::Weight*> stacks) const {
  int64_t n = 0;
  for (const arch::Weight* w : stacks) n += is_bf16(*w) ? 0 : w->rows() * w->cols();
  return n;
}

// RMSNorm (nm null: none) of rows x width activations into the input buffers of the next
// product. GEMV (rows <= kStep): gemv_input. GEMM (rows > kStep): bf16 into act_bf_.
absl::StatusOr<GemvIn> CudaRunner::prepare(const Norm* nm, const float* src, int rows, int width) {
  if (rows <= kStep) return gemv_input(nm, src, rows, width);
  BW24_CUDA_OK(cuda::rmsnorm_bf16(act_bf_.p, src, nm ? f32(nm->w) : nullptr, rows, width, g_.norm_eps,
                                  nm && nm->one_plus, stream_),
               "GEMM input (rmsnorm / bf16)");
  return GemvIn{nullptr, {}, act_bf_.p};
}

// The GEMV input of rows x width activations (any row count: the routed down projection takes
// kStep x n_used rows): f32 into h_ (or src itself without a norm), int8 alongside when the
// model has int8-path weights.
absl::StatusOr<GemvIn> CudaRunner::gemv_input(const Norm* nm, const float* src, int rows, int width) {
  if (nm && nm == folded_ && rows == 1) {  // the output projection before wrote it (fold_next_): no launch
    folded_ = nullptr;
    cuda::ActQ8 q8{fold_q_.p, fold_ds_.p};
    q8.norm_parts = fold_parts_.p;
    q8.n_parts = width / 16;
    q8.norm_eps = g_.norm_eps;
    return GemvIn{nullptr, q8, nullptr};
  }
  const float* w = nm ? f32(nm->w) : nullptr;
  const bool one_plus = nm && nm->one_plus;
  cudaError_t e = cudaSuccess;
  if (!ablate(kAblNorm, rows) && !ablate(nm ? kAblNormed : kAblActQ, rows)) {
    if (uses_q8_ && width % 32 == 0)
      e = cuda::rmsnorm_q8(nm ? h_.p : nullptr, act_q_.p, act_ds_.p, src, w, rows, width, g_.norm_eps, one_plus, stream_);
    else if (nm)
      e = cuda::rmsnorm(h_.p, src, w, rows, width, g_.norm_eps, one_plus, stream_);
  }
  BW24_CUDA_OK(e, "GEMV input (rmsnorm / int8 quantize)");
  return GemvIn{nm ? h_.p : src, {act_q_.p, act_ds_.p}, nullptr};
}

// A folded norm (fold_next_) needs every product after it on a folded instance of the streamed GEMV
// (cuda::gemv_q8_takes_folded) and no other reader of its f32 output. Attention: not gated (its Q
// product is split after the norm); Q, K and V int8 stores. A dense MLP: the gate-up pair.
bool CudaRunner::folds_norms() const { return opt_.fold_norms && fold_q_.p && cuda::gemv_q8_norm_fold_on(); }
const Norm* CudaRunner::fold_target_attention(const arch::Layer& L) const {
  const AttentionBlock& a = L.attn;
  if (!folds_norms() || L.recurrent || a.gated || !a.norm.w) return nullptr;
  for (const arch::Weight* w : {&a.wq, &a.wk, &a.wv})
    if (!is_q8(*w) || !cuda::gemv_q8_takes_folded(w_.type_of(w->t), cuda::GemvOut::kStore, w->rows(), w->cols()))
      return nullptr;
  return &a.norm;
}
const Norm* CudaRunner::fold_target_mlp(const MlpBlock& m) const {
  if (!folds_norms() || m.is_moe() || !m.norm.w || !is_q8(m.gate) || w_.type_of(m.gate.t) != w_.type_of(m.up.t) ||
      !cuda::gemv_q8_takes_folded(w_.type_of(m.gate.t), cuda::GemvOut::kGateUp, m.gate.rows(), m.gate.cols()))
    return nullptr;
  return &m.norm;
}

absl::Status CudaRunner::norm(const Norm& nm, float* y, const float* x, int rows, int width) {
  return cuda_status(cuda::rmsnorm(y, x, f32(nm.w), rows, width, g_.norm_eps, nm.one_plus, stream_), "rmsnorm");
}

// y = W in (or +=, see cuda::GemvOut) for the n rows of a pass: the GEMM when the input is
// bf16 (a prefill pass), else the GEMV, which also takes the gate-up pair (w2) in one launch
// and, with `routing`, stacked experts (n rows of input, routing->pairs rows out).
absl::Status CudaRunner::matmul(const arch::Weight& w, const GemvIn& in, int n, float* y, cuda::GemvOut out,
                                const arch::Weight* w2, int act, const Routing* routing, const cuda::CtaRoom* room) {
  const uint32_t type = w_.type_of(w.t);
  if (in.bf) return gemm({{&w, y}}, in.bf, n, out);
  cuda::GemvRoute route{};
  if (routing) {
    route = {moe_.ids.p, expert_bytes(w), routing->pairs, routing->x_div};
    n = 1;  // a routed launch takes one row per pair
  }
  const cuda::GemvRoute* r = routing ? &route : nullptr;
  cudaError_t e;
  if (cuda::gemv_q8_supports(type))
    e = cuda::gemv_q8(w_.at(w.t), w2 ? w_.at(w2->t) : nullptr, type, w.rows(), w.cols(), in.q8, n, y, out, act,
                      stream_, r, room);
  else
    e = cuda::gemv(w_.at(w.t), type, w.rows(), w.cols(), in.x, n, y, out, stream_, r);
  if (e != cudaSuccess) return error(Code::kDevice, "CUDA gemv of '{}': {}", w.t->name, cudaGetErrorString(e));
  return absl::OkStatus();
}

absl::Status CudaRunner::gemm(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int n, cuda::GemvOut out) {
  const char* name = jobs.begin()->w->t->name.c_str();
  auto fail = [&](cudaError_t e) { return error(Code::kDevice, "CUDA gemm of '{}': {}", name, cudaGetErrorString(e)); };
  int64_t need = 0;
  for (const GemmJob& j : jobs) need += expanded_elems(*j.w);
  if (need <= scratch_elems_) {
    // The group's expansion: done ahead on the side stream (ahead_), else here into buffer 0.
    const int at = plan_index(jobs);
    int buf = 0;
    if (at >= 0 && at == ahead_.pending) {
      buf = ahead_.pending_buf;
      BW24_CUDA_OK(cudaStreamWaitEvent(stream_, ahead_.expanded[buf]), "expansion ahead");
      ahead_.pending = -1;
    } else {
      buf = free_scratch();
      int64_t off = 0;
      for (const GemmJob& j : jobs) {
        BW24_RETURN_IF_ERROR(expand(*j.w, off, buf, stream_));
        off += expanded_elems(*j.w);
      }
    }
    if (at >= 0 && at + 1 < static_cast<int>(ahead_.plan.size())) BW24_RETURN_IF_ERROR(expand_ahead(at + 1, 1 - buf));
    // The group's weights in the scratch one after another, in the group's order (as expanded).
    cuda::GemmSegment segs[cuda::kMaxGemmSegments];
    int count = 0;
    int64_t off = 0;
    for (const GemmJob& j : jobs) {
      const int64_t rows = j.w->rows();
      const cuda::bf16* wp = is_bf16(*j.w) ? static_cast<const cuda::bf16*>(w_.at(j.w->t)) : scratch(buf) + off;
      off += expanded_elems(*j.w);
      segs[count++] = {wp, j.y, rows, rows};
    }
    const cudaError_t e = cuda::gemm_bf16_multi(a, segs, count, n, jobs.begin()->w->cols(), out, stream_);
    if (e != cudaSuccess) return fail(e);
    return used_scratch(buf);
  }
  const int buf = free_scratch();
  for (const GemmJob& j : jobs) {
    const uint32_t type = w_.type_of(j.w->t);
    const int64_t rows = j.w->rows(), cols = j.w->cols();
    const int64_t step = std::max<int64_t>(2, scratch_elems_ / cols / 2 * 2);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
      const int64_t nr = std::min(step, rows - r0);
      cudaError_t e = cuda::dequant_bf16(w_.at(j.w->t), type, rows, cols, r0, nr, scratch(buf), stream_);
      if (e == cudaSuccess) e = cuda::gemm_bf16(a, scratch(buf), j.y + r0, n, nr, cols, rows, out, stream_);
      if (e != cudaSuccess) return fail(e);
    }
  }
  return used_scratch(buf);
}

absl::Status CudaRunner::init_ahead() {
  if (!opt_.expand_ahead) return absl::OkStatus();
  auto add = [&](std::vector<const arch::Weight*> group) {
    int64_t need = 0;
    for (const arch::Weight* w : group) need += expanded_elems(*w);
    if (need > 0 && need <= scratch_elems_) ahead_.plan.push_back(std::move(group));
  };
  for (const auto& L : g_.layers) {
    if (L.recurrent) {  // delta_net(): its products one by one in prefill, then out_proj
      const arch::DeltaNetBlock& d = L.delta_net;
      add({&d.in_qkv});
      add({&d.in_z});
      if (d.in_ba) {
        add({&d.in_ba});
      } else {
        add({&d.in_b});
        add({&d.in_a});
      }
      add({&d.out_proj});
    } else {
      add({&L.attn.wq, &L.attn.wk, &L.attn.wv});
      add({&L.attn.wo});
    }
    if (L.mlp.is_moe()) continue;
    add({&L.mlp.gate, &L.mlp.up});
    add({&L.mlp.down});
  }
  if (ahead_.plan.empty()) return absl::OkStatus();
  // The second scratch is a speed-up, not a need: where it does not fit beside the weights and
  // the cache, every expansion stays in line (cudaMalloc's out-of-memory error is not sticky).
  if (!wscratch2_.alloc(static_cast<size_t>(scratch_elems_), "weight expansion scratch").ok()) {
    cudaGetLastError();
    wscratch2_.p = nullptr;
    ahead_.plan.clear();
    return absl::OkStatus();
  }
  BW24_CUDA_OK(cudaStreamCreateWithFlags(&ahead_.stream, cudaStreamNonBlocking), "stream");
  for (cudaEvent_t* ev : {&ahead_.expanded[0], &ahead_.expanded[1], &ahead_.used[0], &ahead_.used[1]})
    BW24_CUDA_OK(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "event");
  return absl::OkStatus();
}

// w expanded to bf16 at element `offset` of scratch buffer buf, on stream s (BF16 weights are read
// in place and take no room: expanded_elems 0).
absl::Status CudaRunner::expand(const arch::Weight& w, int64_t offset, int buf, cudaStream_t s) {
  if (is_bf16(w)) return absl::OkStatus();
  return cuda_status(cuda::dequant_bf16(w_.at(w.t), w_.type_of(w.t), w.rows(), w.cols(), 0, w.rows(),
                                        scratch(buf) + offset, s),
                     "weight expansion");
}

int CudaRunner::plan_index(std::initializer_list<GemmJob> jobs) {
  if (!ahead_.stream) return -1;
  auto same = [&](const std::vector<const arch::Weight*>& g) {
    if (g.size() != jobs.size()) return false;
    size_t i = 0;
    for (const GemmJob& j : jobs)
      if (g[i++] != j.w) return false;
    return true;
  };
  // The expected group is the one after the last (a pass walks the plan in order).
  const int next = ahead_.pending >= 0 ? ahead_.pending : 0;
  if (next < static_cast<int>(ahead_.plan.size()) && same(ahead_.plan[size_t(next)])) return next;
  for (size_t i = 0; i < ahead_.plan.size(); ++i)
    if (same(ahead_.plan[i])) return static_cast<int>(i);
  return -1;
}

absl::Status CudaRunner::expand_ahead(int at, int buf) {
  BW24_CUDA_OK(cudaStreamWaitEvent(ahead_.stream, ahead_.used[buf]), "expansion ahead");
  int64_t off = 0;
  for (const arch::Weight* w : ahead_.plan[size_t(at)]) {
    BW24_RETURN_IF_ERROR(expand(*w, off, buf, ahead_.stream));
    off += expanded_elems(*w);
  }
  BW24_CUDA_OK(cudaEventRecord(ahead_.expanded[buf], ahead_.stream), "expansion ahead");
  ahead_.pending = at;
  ahead_.pending_buf = buf;
  return absl::OkStatus();
}

absl::Status CudaRunner::used_scratch(int buf) {
  if (ahead_.stream) BW24_CUDA_OK(cudaEventRecord(ahead_.used[buf], stream_), "expansion ahead");
  return absl::OkStatus();
}

// The weight type of jobs when they all share one the grouped GEMM expands itself
// (cuda::gemm_fused_supports), else 0. Dense products expand into the scratch instead: with
// every token tile of a pass expanding the same weights again, the fused tiles measured slower
// (Qwen3-8B Q4_K_M on the H200: pp512 7577 fused / 13591 tok/s; pp48 1443 / 1705).
uint32_t CudaRunner::fused_type(std::initializer_list<GemmJob> jobs) const {
  const uint32_t t = w_.type_of(jobs.begin()->w->t);
  for (const GemmJob& j : jobs)
    if (w_.type_of(j.w->t) != t) return 0;
  return cuda::gemm_fused_supports(t) ? t : 0;
}

// Whether a pass of n tokens takes its angles from rope_table (one-token steps whose flash decode
// does the RoPE: attention() sets QkRopeArgs::angles under the same test).
bool CudaRunner::rope_table_step(int n) const {
  return n == 1 && opt_.fused_rope && rope_table_on() && !ablate(kAblRope, n) && !ablate(kAblAttn, n);
}

}  // namespace bw24::engine::cuda_runner_detail

namespace bw24::engine {

absl::StatusOr<std::unique_ptr<Runner>> make_cuda_runner(const arch::ModelGraph& graph, const DeviceWeights& w,
                                                         const RunnerOptions& opt) {
  if (graph.layers.empty()) return error(Code::kModel, "model has no layers");
  if (opt.kv_rotate)
    for (const auto& L : graph.layers)
      if (!L.recurrent && kv::kv_rotation(opt.k_type, opt.v_type, L.attn.head_dim).any())
        return error(Code::kUnsupported,
                     "option kv_rotate=1 with a {} K / {} V cache: the CUDA backend does not rotate its cache yet "
                     "(the CPU reference does; docs/abi.md)",
                     kv::kv_type_name(opt.k_type), kv::kv_type_name(opt.v_type));
  auto r = std::make_unique<cuda_runner_detail::CudaRunner>(graph, w, opt);
  BW24_RETURN_IF_ERROR(r->init());
  return std::unique_ptr<Runner>(std::move(r));
}

}  // namespace bw24::engine
