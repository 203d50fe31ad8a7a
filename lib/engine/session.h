// Session: one conversation's state over a shared Model: the runner (KV cache), the token
// history, the latest logits, the sampler RNG and the cancel flag. One thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/engine/model.h"
#include "lib/engine/runner.h"
#include "lib/sampling/sampler.h"

namespace bw24::engine {

struct SessionOptions {
  int32_t n_ctx = 0;       // 0 = min(n_ctx_train, 4096)
  int32_t kv_type_k = -1;  // BW24_KV_* (-1 = backend default)
  int32_t kv_type_v = -1;
  uint64_t seed = 0x5eed;
  bool round_act_int8 = false;  // CPU reference: RunnerOptions::round_act_int8 (tests only)
  bool prefill_gemm = true;     // CUDA runner: RunnerOptions::prefill_gemm (tests turn it off)
  int64_t gemm_scratch_elems = 0;  // CUDA runner: RunnerOptions::gemm_scratch_elems (tests only)
  bool expand_ahead = true;        // CUDA runner: RunnerOptions::expand_ahead (tests turn it off)
  bool moe_int8_prefill = true;    // CUDA runner: RunnerOptions::moe_int8_prefill (tests turn it off)
  bool moe_int8_superblock = true;  // CUDA runner: RunnerOptions::moe_int8_superblock (tests turn it off)
  bool fused_rope = true;           // CUDA runner: RunnerOptions::fused_rope (tests turn it off)
  bool fused_combine = true;        // CUDA runner: RunnerOptions::fused_combine (tests turn it off)
  bool fused_moe_norm = true;       // CUDA runner: RunnerOptions::fused_moe_norm (tests turn it off)
  bool fused_delta_net = true;      // CUDA runner: RunnerOptions::fused_delta_net (tests turn it off)
  bool fused_o_epilogue = true;     // CUDA runner: RunnerOptions::fused_o_epilogue (tests turn it off)
  bool fold_norms = true;           // CUDA runner: RunnerOptions::fold_norms (tests turn it off)
  bool cuda_graph = true;           // CUDA runner: the model's cuda_graph and this (tests turn it off)
  bool emulate_device_choice = false;  // CPU reference: RunnerOptions::emulate_device_choice (tests only)
  int32_t fail_forward_at = 0;         // CPU reference: RunnerOptions::fail_forward_at (tests only)
  bool run_ahead = true;            // RunnerOptions::run_ahead: decode steps queued ahead (tests turn it off)
};

enum class StopReason : int32_t { kLength = 0, kEog = 1, kContextFull = 2 };

struct DecodeResult {
  int32_t n_tokens = 0;
  StopReason stop = StopReason::kLength;
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& opt);

  absl::Status prefill(const int32_t* tokens, int32_t n, bool all_logits);
  // Writes up to cap tokens to out; on error result->n_tokens still counts the committed ones.
  absl::Status decode(const sampling::Params& p, std::optional<uint64_t> reseed, bool ignore_eog,
                      int32_t* out, int32_t cap, DecodeResult* result);
  absl::Status rewind(int32_t n_keep);
  absl::Status logits(const float** out, int32_t* n_rows, int32_t* n_vocab);

  int32_t position() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t n_ctx() const { return n_ctx_; }
  void cancel() { cancel_.store(true, std::memory_order_relaxed); }
  const Model& model() const { return *model_; }

 private:
  Session() : sampler_(0) {}
  absl::Status run(const int32_t* tokens, int32_t n, bool all_logits);
  absl::Status ensure_logits();
  // One step with the token choice on the device: commit tok, *next = the argmax after it, or the
  // token sampled with p (not null) and the sampler's next draw; the logits stay there.
  absl::Status run_device(int32_t tok, const sampling::Params* p, int32_t* next);
  // decode() from the feed of `first` (already written to out) on, with the steps run ahead
  // (Runner::queue_step): sampled with p where not null, else greedy.
  absl::Status decode_ahead(int32_t first, const sampling::Params* p, bool ignore_eog, int32_t* out, int32_t cap,
                            DecodeResult* result);
  // Forget the device's pending choice; a sampled one gives its draw back to the sampler.
  void drop_pending();
  // Recurrent runners: rebuild the state from tokens_[0, upto) (after a failed request or a
  // rewind). On failure the history is dropped (position 0) and the error returned.
  absl::Status replay(int32_t upto);
  // After a failed request or a rewind: the logits are gone, and a recurrent state is rebuilt to
  // one token behind the history (state_behind_), so that ensure_logits() can feed that token.
  absl::Status lose_logits();

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Runner> runner_;
  int32_t n_ctx_ = 0;
  std::vector<int32_t> tokens_;  // the context, one id per position
  std::vector<float> logits_;
  int32_t logits_rows_ = 0;      // 0 = no valid logits
  int32_t greedy_next_ = -1;     // the device's choice after the last token (run_device), else -1
  bool pending_sampled_ = false;  // greedy_next_ was sampled: with pending_params_, after pending_rng_
  sampling::Params pending_params_;
  std::mt19937_64 pending_rng_;
  bool device_logits_ = false;   // run_device left the last row's logits on the device (Runner::last_logits)
  bool state_behind_ = false;    // the recurrent state covers tokens_ but the last (lose_logits)
  sampling::Sampler sampler_;
  std::atomic<bool> cancel_{false};
};

}  // namespace bw24::engine
