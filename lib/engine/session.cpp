#include "lib/engine/session.h"

#include <algorithm>

#include "lib/core/status.h"
#ifdef BW24_WITH_CUDA
#include "lib/engine/cuda_runner.h"
#endif

namespace bw24::engine {
namespace {

constexpr int32_t kMicroBatch = 512;  // prefill chunk: bounds the reference backend's scratch

// BW24_KV_AUTO: f32 on the CPU reference (exact), f16 on CUDA (half the bytes a decode step reads
// from the cache; what llama.cpp uses by default). Which types a backend takes is the runner's
// check (make_*_runner).
absl::StatusOr<kv::KvType> kv_type(int32_t t, const char* which, bool device) {
  if (t == -1) return device ? kv::KvType::kF16 : kv::KvType::kF32;
  if (t < 0 || t > 5) return error(Code::kInvalidArgument, "KV type {} for {} is not a BW24_KV_* value", t, which);
  return static_cast<kv::KvType>(t);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& opt) {
  const arch::ModelGraph& g = model->graph();
  if (model->options().vocab_only)
    return error(Code::kState, "the model was opened with BW24_MODEL_VOCAB_ONLY: no sessions");
  if (opt.n_ctx < 0) return error(Code::kInvalidArgument, "n_ctx {} is negative", opt.n_ctx);
  int32_t n_ctx = opt.n_ctx ? opt.n_ctx : std::min(g.n_ctx_train > 0 ? g.n_ctx_train : 4096, 4096);
  if (n_ctx > (1 << 24)) return error(Code::kInvalidArgument, "n_ctx {} is larger than 2^24", n_ctx);
  RunnerOptions ro;
  ro.n_ctx = n_ctx;
  const bool device = model->options().device >= 0;
  BW24_ASSIGN_OR_RETURN(ro.k_type, kv_type(opt.kv_type_k, "K", device));
  BW24_ASSIGN_OR_RETURN(ro.v_type, kv_type(opt.kv_type_v, "V", device));
  ro.n_threads = model->options().n_threads;
  ro.cuda_graph = model->cuda_graph() && opt.cuda_graph;
  ro.kv_rotate = model->kv_rotate();
  ro.round_act_int8 = opt.round_act_int8;
  ro.prefill_gemm = opt.prefill_gemm;
  ro.gemm_scratch_elems = opt.gemm_scratch_elems;
  ro.expand_ahead = opt.expand_ahead;
  ro.moe_int8_prefill = opt.moe_int8_prefill;
  ro.moe_int8_superblock = opt.moe_int8_superblock;
  ro.fused_rope = opt.fused_rope;
  ro.fused_combine = opt.fused_combine;
  ro.fused_moe_norm = opt.fused_moe_norm;
  ro.fused_delta_net = opt.fused_delta_net;
  ro.fused_o_epilogue = opt.fused_o_epilogue;
  ro.fold_norms = opt.fold_norms;
  ro.emulate_device_choice = opt.emulate_device_choice;
  ro.fail_forward_at = opt.fail_forward_at;
  ro.run_ahead = opt.run_ahead;
  ro.stop_tokens = model->eog_tokens();
  std::unique_ptr<Session> s(new Session());
  if (model->options().device >= 0) {
#ifdef BW24_WITH_CUDA
    BW24_ASSIGN_OR_RETURN(s->runner_, make_cuda_runner(g, *model->device_weights(), ro));
#else
    return error(Code::kDevice, "this libbw24 was built without CUDA");
#endif
  } else {
    BW24_ASSIGN_OR_RETURN(s->runner_, make_ref_runner(g, ro));
  }
  s->model_ = std::move(model);
  s->n_ctx_ = n_ctx;
  s->sampler_.reseed(opt.seed);
  s->tokens_.reserve(static_cast<size_t>(std::min(n_ctx, 1 << 16)));
  return s;
}

void Session::drop_pending() {
  if (greedy_next_ >= 0 && pending_sampled_) sampler_.set_rng(pending_rng_);
  greedy_next_ = -1;
  pending_sampled_ = false;
}

absl::Status Session::run(const int32_t* tokens, int32_t n, bool all_logits) {
  const int32_t V = model_->graph().n_vocab;
  drop_pending();
  device_logits_ = false;
  const int32_t start = position();
  logits_.resize(static_cast<size_t>(all_logits ? n : 1) * V);
  for (int32_t done = 0; done < n;) {
    int32_t chunk = std::min(kMicroBatch, n - done);
    ForwardRequest req;
    req.tokens = tokens + done;
    req.n = chunk;
    req.pos = start + done;
    req.all_logits = all_logits;
    // Without all_logits only the last chunk's last row matters; earlier chunks still need a
    // destination, so they write into row 0 and are overwritten.
    req.logits = logits_.data() + (all_logits ? static_cast<size_t>(done) * V : 0);
    req.cancel = &cancel_;
    absl::Status st = runner_->forward(req);
    if (!st.ok()) {
      tokens_.resize(start);
      lose_logits().IgnoreError();  // a recurrent state may hold part of this request
      return st;
    }
    tokens_.insert(tokens_.end(), tokens + done, tokens + done + chunk);
    done += chunk;
  }
  logits_rows_ = all_logits ? n : 1;
  return absl::OkStatus();
}

absl::Status Session::replay(int32_t upto) {
  device_logits_ = false;
  state_behind_ = false;
  runner_->reset();
  std::vector<float> scratch(static_cast<size_t>(model_->graph().n_vocab));
  for (int32_t done = 0; done < upto;) {
    ForwardRequest req;
    req.tokens = tokens_.data() + done;
    req.n = std::min(kMicroBatch, upto - done);
    req.pos = done;
    req.logits = scratch.data();
    if (absl::Status st = runner_->forward(req); !st.ok()) {  // cannot rebuild: drop the history rather than lie
      tokens_.clear();
      logits_rows_ = 0;
      runner_->reset();
      return st;
    }
    done += req.n;
  }
  return absl::OkStatus();
}

absl::Status Session::lose_logits() {
  logits_rows_ = 0;
  device_logits_ = false;
  drop_pending();
  if (!runner_->recurrent()) return absl::OkStatus();  // an attention cache row is simply written again
  BW24_RETURN_IF_ERROR(replay(std::max(position() - 1, 0)));
  state_behind_ = position() > 0;
  return absl::OkStatus();
}

absl::Status Session::prefill(const int32_t* tokens, int32_t n, bool all_logits) {
  cancel_.store(false, std::memory_order_relaxed);
  if (n <= 0) return error(Code::kInvalidArgument, "prefill of {} tokens", n);
  const int32_t V = model_->graph().n_vocab;
  for (int32_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= V)
      return error(Code::kTokenOutOfRange, "token {} at index {} is outside the vocabulary [0, {})",
                   tokens[i], i, V);
  if (static_cast<int64_t>(position()) + n > n_ctx_)
    return error(Code::kContextFull, "prefill of {} tokens at position {} exceeds the context of {}",
                 n, position(), n_ctx_);
  if (state_behind_) BW24_RETURN_IF_ERROR(ensure_logits());  // feeds the token a rebuilt state lacks
  return run(tokens, n, all_logits);
}

absl::Status Session::ensure_logits() {
  if (logits_rows_ > 0) return absl::OkStatus();
  if (position() == 0) return error(Code::kState, "no logits yet: prefill the prompt first");
  if (device_logits_) {  // the last greedy step's row, still on the device
    logits_.resize(static_cast<size_t>(model_->graph().n_vocab));
    BW24_RETURN_IF_ERROR(runner_->last_logits(logits_.data()));
    logits_rows_ = 1;
    return absl::OkStatus();
  }
  // After a rewind or a failed request the logits of the last kept position are recomputed from
  // its token (a recurrent state was left one token behind for this: lose_logits).
  const int32_t last = tokens_.back(), keep = position();
  tokens_.pop_back();
  state_behind_ = false;
  absl::Status st = run(&last, 1, false);
  if (!st.ok() && position() == keep - 1) {  // the token stays in the history (unless a rebuild dropped it)
    tokens_.push_back(last);
    lose_logits().IgnoreError();
  }
  return st;
}

absl::Status Session::logits(const float** out, int32_t* n_rows, int32_t* n_vocab) {
  BW24_RETURN_IF_ERROR(ensure_logits());
  *out = logits_.data();
  *n_rows = logits_rows_;
  *n_vocab = model_->graph().n_vocab;
  return absl::OkStatus();
}

absl::Status Session::decode(const sampling::Params& p, std::optional<uint64_t> reseed,
                             bool ignore_eog, int32_t* out, int32_t cap, DecodeResult* result) {
  cancel_.store(false, std::memory_order_relaxed);
  *result = DecodeResult{};
  if (cap < 0) return error(Code::kInvalidArgument, "decode capacity {} is negative", cap);
  if (position() >= n_ctx_)
    return error(Code::kContextFull, "the context of {} positions is full", n_ctx_);
  // Greedy without penalties is an argmax, and top-k sampling without penalties runs the same way
  // on a device (Sampler::device_sampleable): a runner that takes them there sends back the token
  // id alone, and the logits of the step stay there (logits() copies the last row back if asked:
  // Runner::last_logits). The device choice for step i + 1 takes the sampler's draw when step i
  // runs, which is the draw the host would take for it next; a choice never used gives it back.
  const bool device_greedy = p.plain_greedy() && runner_->device_argmax();
  const bool device_sample = !device_greedy && runner_->device_argmax() &&
                             sampling::Sampler::device_sampleable(p, kDeviceSampleMaxTopK);
  const bool pending_fits =
      greedy_next_ >= 0 && !reseed &&
      (pending_sampled_ ? device_sample && p.temperature == pending_params_.temperature &&
                              p.top_k == pending_params_.top_k && p.top_p == pending_params_.top_p &&
                              p.min_p == pending_params_.min_p
                        : device_greedy);
  if (!pending_fits) drop_pending();
  int32_t next = greedy_next_;  // the device's choice for the coming step, or -1
  if (next < 0) BW24_RETURN_IF_ERROR(ensure_logits());
  if (reseed) sampler_.reseed(*reseed);
  const int32_t V = model_->graph().n_vocab;
  const bool ahead = (device_greedy || device_sample) && runner_->can_queue_steps(!ignore_eog);
  for (int32_t i = 0; i < cap; ++i) {
    if (cancel_.load(std::memory_order_relaxed))
      return error(Code::kCancelled, "decode cancelled after {} tokens", result->n_tokens);
    int32_t tok = next;
    if (tok >= 0) {  // the device's pending choice is used now (its draw, if any, stays taken)
      greedy_next_ = -1;
      pending_sampled_ = false;
    } else {
      tok = sampler_.sample(logits_.data() + static_cast<size_t>(logits_rows_ - 1) * V, V, p, tokens_);
    }
    out[result->n_tokens++] = tok;
    if (!ignore_eog && model_->is_eog(tok)) {
      result->stop = StopReason::kEog;
      return absl::OkStatus();
    }
    if (position() >= n_ctx_) {
      result->stop = StopReason::kContextFull;
      return absl::OkStatus();
    }
    if (ahead) return decode_ahead(tok, device_sample ? &p : nullptr, ignore_eog, out, cap, result);
    absl::Status st = device_greedy || device_sample ? run_device(tok, device_sample ? &p : nullptr, &next)
                                                     : run(&tok, 1, false);
    if (!st.ok()) {
      --result->n_tokens;  // not committed
      return st;
    }
  }
  result->stop = StopReason::kLength;
  return absl::OkStatus();
}

absl::Status Session::decode_ahead(int32_t first, const sampling::Params* p, bool ignore_eog, int32_t* out,
                                   int32_t cap, DecodeResult* result) {
  // The queued steps, oldest first: the token each feeds (-1 until the host has read it) and the
  // sampler's state before the step's draw (a step taken back gives its draw back).
  struct Queued {
    int32_t token;
    std::mt19937_64 rng;
  };
  Queued queued[2];
  int n_queued = 0;
  DeviceSampling ds;
  const auto queue = [&](int32_t host_token, int64_t pos) -> absl::Status {
    Runner::QueuedStep step;
    step.token = host_token;
    step.pos = pos;
    step.stop_armed = !ignore_eog;
    const std::mt19937_64 before = sampler_.rng();
    if (p) {
      ds = {p->temperature, p->top_k, p->top_p, p->min_p, sampler_.draw()};
      step.sample = &ds;
    }
    if (absl::Status st = runner_->queue_step(step); !st.ok()) {
      if (p) sampler_.set_rng(before);
      return st;
    }
    queued[n_queued++] = {host_token, before};
    return absl::OkStatus();
  };
  // After an error: what is queued is forgotten with its draws; a recurrent state is rebuilt.
  const int32_t start = position();
  const auto fail = [&](absl::Status st) {
    runner_->abandon_steps();
    if (p && n_queued > 0) sampler_.set_rng(queued[0].rng);
    greedy_next_ = -1;
    pending_sampled_ = false;
    device_logits_ = false;
    result->n_tokens = position() - start;  // the committed ones
    lose_logits().IgnoreError();
    return st;
  };
  logits_rows_ = 0;  // the steps' logits stay on the device
  device_logits_ = false;
  greedy_next_ = -1;
  pending_sampled_ = false;
  if (absl::Status st = queue(first, start); !st.ok()) return fail(st);
  for (;;) {
    // The oldest step feeds the token at position(); the next is queued before its choice is read,
    // unless decode() would stop before feeding it whatever the choice: the count, a full context,
    // a cancel.
    const int32_t i = result->n_tokens;  // out's index of the oldest step's choice
    const bool cancelled = cancel_.load(std::memory_order_relaxed);
    const bool go = i < cap && position() + 1 < n_ctx_ && !cancelled;
    if (go)
      if (absl::Status st = queue(-1, position() + 1); !st.ok()) return fail(st);
    int32_t choice = -1;
    if (absl::Status st = runner_->finish_step(&choice); !st.ok()) return fail(st);
    tokens_.push_back(queued[0].token);
    const Queued oldest = queued[0];
    queued[0] = queued[1];
    --n_queued;
    device_logits_ = true;
    if (!go) {
      greedy_next_ = choice;  // pending, as after run_device
      pending_sampled_ = p != nullptr;
      if (p) {
        pending_params_ = *p;
        pending_rng_ = oldest.rng;
      }
      if (i >= cap) {
        result->stop = StopReason::kLength;
        return absl::OkStatus();
      }
      if (cancelled) return error(Code::kCancelled, "decode cancelled after {} tokens", result->n_tokens);
      greedy_next_ = -1;  // the context is full: the choice is written, not fed (decode()'s order)
      pending_sampled_ = false;
      out[result->n_tokens++] = choice;
      result->stop = !ignore_eog && model_->is_eog(choice) ? StopReason::kEog : StopReason::kContextFull;
      return absl::OkStatus();
    }
    out[result->n_tokens++] = choice;
    queued[0].token = choice;  // the step queued behind the oldest was fed it
    if (!ignore_eog && model_->is_eog(choice)) {
      // That step was held on the device (a stop token): taken back with its draw; last_logits()
      // is the row that chose the end of generation.
      if (absl::Status st = runner_->drop_step(); !st.ok()) return fail(st);
      if (p) sampler_.set_rng(queued[0].rng);
      result->stop = StopReason::kEog;
      return absl::OkStatus();
    }
  }
}

absl::Status Session::run_device(int32_t tok, const sampling::Params* p, int32_t* next) {
  ForwardRequest req;
  req.tokens = &tok;
  req.n = 1;
  req.pos = position();
  req.argmax = next;
  req.cancel = &cancel_;
  DeviceSampling ds;
  const std::mt19937_64 before = sampler_.rng();
  if (p) {
    ds = {p->temperature, p->top_k, p->top_p, p->min_p, sampler_.draw()};
    req.sample = &ds;
  }
  logits_rows_ = 0;  // this step's logits stay on the device
  greedy_next_ = -1;  // the pending choice, if any, is tok: used, not dropped
  pending_sampled_ = false;
  device_logits_ = false;
  if (absl::Status st = runner_->forward(req); !st.ok()) {
    if (p) sampler_.set_rng(before);  // no token was chosen with the draw
    lose_logits().IgnoreError();  // a recurrent state may hold part of this step
    return st;
  }
  tokens_.push_back(tok);
  greedy_next_ = *next;
  pending_sampled_ = p != nullptr;
  if (p) {
    pending_params_ = *p;
    pending_rng_ = before;
  }
  device_logits_ = true;
  return absl::OkStatus();
}

absl::Status Session::rewind(int32_t n_keep) {
  if (n_keep < 0 || n_keep > position())
    return error(Code::kInvalidArgument, "rewind to {} outside [0, {}]", n_keep, position());
  if (n_keep == position()) return absl::OkStatus();
  tokens_.resize(n_keep);
  // The logits are recomputed on demand by ensure_logits(). A recurrent state cannot be cut back:
  // it is recomputed from the kept tokens but the last. Cost: one prefill of n_keep - 1 tokens.
  return lose_logits();
}

}  // namespace bw24::engine
