// A Runner executes a ModelGraph for one session on one backend and owns that session's device
// state (KV cache, scratch): the CPU reference runner (ref_runner.cpp) and the CUDA runner
// (cuda_runner*.cpp) behind the same interface.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/arch/graph.h"
#include "lib/kv/kv_cache.h"

namespace bw24::engine {

// Top-k sampling on the device (cuda::sample_top_k): sampling::Sampler's chain without penalties
// for temperature > 0 and top_k in [1, kDeviceSampleMaxTopK], with the uniform draw u the host
// sampler would take.
constexpr int32_t kDeviceSampleMaxTopK = 1024;
struct DeviceSampling {
  float temperature = 1.0f;
  int32_t top_k = 1;
  float top_p = 1.0f, min_p = 0.0f;
  double u = 0.0;
};

struct ForwardRequest {
  const int32_t* tokens = nullptr;  // validated ids, n of them
  int32_t n = 0;
  int64_t pos = 0;                  // position of tokens[0]; pos + n <= n_ctx
  bool all_logits = false;          // logits for every token, else only for the last
  float* logits = nullptr;          // [all_logits ? n : 1][n_vocab]
  // Greedy decoding on a runner with device_argmax(): when set (and !all_logits), the argmax of the
  // last row lands here and `logits` is left untouched (the logits never leave the device).
  int32_t* argmax = nullptr;
  const DeviceSampling* sample = nullptr;  // with argmax: the sampled token lands there instead
  const std::atomic<bool>* cancel = nullptr;  // checked between layers
};

class Runner {
 public:
  virtual ~Runner() = default;
  // On error (incl. Code::kCancelled) positions >= pos hold garbage; callers keep their old position.
  virtual absl::Status forward(const ForwardRequest& req) = 0;
  virtual uint64_t state_bytes() const = 0;
  // Recurrent layers (Qwen3.5's delta nets) keep a state that cannot be cut back to an earlier
  // position: such a runner only takes forward() at the position it has reached, and reset()
  // returns it to position 0 (the session replays its kept tokens on rewind).
  virtual bool recurrent() const { return false; }
  // Whether forward() takes ForwardRequest::argmax. Such a runner keeps the logits row of the last
  // position of its last forward() on the device until the next forward() or reset(), and
  // last_logits() copies it out ([n_vocab]).
  virtual bool device_argmax() const { return false; }
  virtual absl::Status last_logits(float* /*out*/) {
    return absl::UnimplementedError("this runner keeps no logits on a device");
  }
  virtual void reset() {}

  // Run-ahead decoding: a device_argmax() runner may take a step before the host has read the
  // token the step before chose, so the device never waits on the host between steps. A queued
  // step is fed the host's token or the choice of the step queued before it; finish_step() waits
  // for the oldest queued step and hands its choice back. A step fed a stop token
  // (RunnerOptions::stop_tokens, when the step before it was queued with stop_armed) is held: it
  // leaves a recurrent state as it was, and the host takes it back with drop_step(), after which
  // last_logits() is the row of the step before it. At most two steps are queued at a time; no
  // forward() or reset() while any is.
  struct QueuedStep {
    int32_t token = -1;   // >= 0: fed from the host; -1: the choice of the step queued before it
    int64_t pos = 0;      // position of the token fed
    const DeviceSampling* sample = nullptr;  // the choice is this sampling's, else the argmax
    bool stop_armed = false;                 // this step's choice, if a stop token, holds the next
  };
  // Whether queue_step() is open now (armed: some step may be queued with stop_armed).
  virtual bool can_queue_steps(bool /*armed*/) const { return false; }
  virtual absl::Status queue_step(const QueuedStep& /*step*/) {
    return absl::UnimplementedError("this runner does not queue steps");
  }
  virtual absl::Status finish_step(int32_t* /*choice*/) {
    return absl::UnimplementedError("this runner does not queue steps");
  }
  virtual absl::Status drop_step() { return absl::UnimplementedError("this runner does not queue steps"); }
  // After an error: waits for what was queued and forgets it (a recurrent state may hold part of
  // it: the caller replays).
  virtual void abandon_steps() {}
};

struct RunnerOptions {
  int32_t n_ctx = 0;
  kv::KvType k_type = kv::KvType::kF32, v_type = kv::KvType::kF32;
  int32_t n_threads = 0;
  bool cuda_graph = true;  // CUDA runner: capture the one-token step once, replay it
  bool kv_rotate = false;  // model option kv_rotate: q8_0 / q4_0 cache rows in a Hadamard basis (lib/kv/kv_cache.h)
  // CPU reference only (tests): round the input rows of products over quantized weights to int8
  // as the CUDA runner's GEMV does, so routing- and sign-sensitive models (MoE routers, delta
  // nets) can be compared with the GPU like for like.
  bool round_act_int8 = false;
  // CUDA runner: prefill passes on the tensor cores (bf16 GEMM) where every layer weight allows;
  // false keeps every pass on the GEMV (f32 / int8 activations), so tests can compare routing and
  // recurrences without bf16 rounding.
  bool prefill_gemm = true;
  // CUDA runner, tests only: cap of the weight expansion scratch in bf16 elements (0: the default),
  // so small models take the paths of large ones (weights expanded in row slices, experts in groups).
  int64_t gemm_scratch_elems = 0;
  // CUDA runner: prefill expands the next GEMM group's weights on a side stream while the current
  // group's GEMM runs (a second expansion scratch); false expands each group in line (tests compare).
  bool expand_ahead = true;
  // CUDA runner: MoE prefill runs Q4_K / Q6_K expert stacks through the int8 grouped GEMM (int8
  // activations, weights read as quantized); false keeps the bf16 grouped GEMM (tests compare).
  bool moe_int8_prefill = true;
  // CUDA runner: the int8 grouped GEMM's activations carry one scale a 256 columns, so Q4_K / Q6_K
  // stacks take its superblock-wide kernel (group scales as integer multiply-adds); false keeps one
  // scale a 32 columns and the per-sub-block kernel (tests compare).
  bool moe_int8_superblock = true;
  // CUDA runner, one-token steps: flash decode also does qk_rope_store's work (q/k norm, RoPE, the
  // key and value into the cache; the same code), so that launch goes; false keeps it (tests compare).
  bool fused_rope = true;
  // CUDA runner, GEMV passes of a MoE layer: the routed down projection adds its pairs into the
  // residual itself (cuda::gemv_q8_combine, moe_combine's arithmetic), so moe_combine's launch goes;
  // false keeps it (tests compare).
  bool fused_combine = true;
  // CUDA runner, one-token steps of a MoE layer: the router launch also does the block's input norm
  // (cuda::MoeGateNorm: rmsnorm_q8's output, the same bits), so that launch goes where the cluster
  // router runs; false keeps it (tests compare).
  bool fused_moe_norm = true;
  // CUDA runner, passes of fewer than cuda::kGdnChunkedFrom tokens on a delta-net layer: the conv,
  // the recurrence and the out_proj's int8 input in one launch (cuda::gdn_decode, the three
  // launches' arithmetic); false keeps the three (tests compare).
  bool fused_delta_net = true;
  // CUDA runner, one-token steps through flash decode: on a gated layer it reads q from the Q
  // product in place and applies the output gate (split_q_gate's and sigmoid_mul's launches go);
  // where the O projection takes the streamed GEMV it also writes O as that GEMV's int8 input
  // (cuda::OutEpilogue, rmsnorm_q8's rounding; that launch goes); false keeps them (tests compare).
  bool fused_o_epilogue = true;
  // CUDA runner, one-token steps of dense layers: the O projection and the down write the next norm's
  // int8 input without its 1 / rms (cuda::gemv_q8_add_normed), and that norm's products apply it, so
  // the norm's rmsnorm_q8 launch goes (not the same bits: rounding); false keeps the launches (tests compare).
  bool fold_norms = true;
  // CPU reference, tests only: behave as a device runner for the token choice (device_argmax(),
  // ForwardRequest::argmax / sample, last_logits()) with the host's argmax and
  // sampling::sample_with_draw, so the session's device paths run in CPU tests.
  bool emulate_device_choice = false;
  // CPU reference, tests only: forward call number fail_forward_at (counted from 1; 0: none) fails
  // after its first layer, as a device error would, with a recurrent state half updated.
  int32_t fail_forward_at = 0;
  // Run-ahead decoding (Runner::queue_step; false closes it, so tests compare), and the tokens
  // that end a generation (the model's end-of-generation ids): a step fed one of them is held.
  bool run_ahead = true;
  std::vector<int32_t> stop_tokens;
};

// The scaled embedding rows of n tokens into out[n][n_embd] (both runners start here).
void embed_tokens(const arch::ModelGraph& g, const int32_t* tokens, int64_t n, float* out);

absl::StatusOr<std::unique_ptr<Runner>> make_ref_runner(const arch::ModelGraph& graph,
                                                        const RunnerOptions& opt);

}  // namespace bw24::engine
