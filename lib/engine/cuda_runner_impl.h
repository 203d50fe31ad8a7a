// The CUDA runner (make_cuda_runner, lib/engine/cuda_runner.h): its helpers, members and method
// declarations, private to lib/engine. The methods live in three files: cuda_runner.cpp (set-up, a
// pass, the captured step and the run-ahead queue, the GEMV / GEMM dispatch and the weight expansion
// ahead of the prefill GEMM), cuda_runner_layers.cpp (attention, delta-net and dense FFN layers) and
// cuda_runner_moe.cpp (mixture-of-experts layers).
#pragma once

#include "lib/engine/cuda_runner.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cuda/attention/flash.cuh"
#include "cuda/common/q6k_tiles.cuh"
#include "cuda/deltanet/gdn.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/moe/moe.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/ops/embed.cuh"
#include "cuda/ops/ops.cuh"
#include "cuda/sampling/sampling.cuh"
#include "lib/core/status.h"
#include "lib/engine/cuda_check.h"
#include "lib/quant/repack.h"
#include "lib/quant/traits.h"
#include "lib/ref/ops.h"

namespace bw24::engine::cuda_runner_detail {

// An allocation of n elements, freed with the owner: device memory, or pinned host memory
// (cudaMallocHost: what a captured graph copies from must stay put and be page-locked).
template <typename T, bool kPinned>
struct CudaArray {
  T* p = nullptr;
  CudaArray() = default;
  CudaArray(const CudaArray&) = delete;
  CudaArray(CudaArray&& o) noexcept : p(o.p) { o.p = nullptr; }
  CudaArray& operator=(const CudaArray&) = delete;
  ~CudaArray() {
    if constexpr (kPinned)
      cudaFreeHost(p);
    else
      cudaFree(p);
  }
  absl::Status alloc(size_t n, const char* what) {
    void* v = nullptr;
    const size_t bytes = std::max<size_t>(n, 1) * sizeof(T);
    const cudaError_t e = kPinned ? cudaMallocHost(&v, bytes) : cudaMalloc(&v, bytes);
    p = static_cast<T*>(v);
    return cuda_status(e, what);
  }
};
template <typename T>
using DeviceArray = CudaArray<T, false>;
template <typename T>
using PinnedArray = CudaArray<T, true>;

// ---------------------------------------------------------------------------------------------
// Runner.
// ---------------------------------------------------------------------------------------------

// The device cache type of a session KV type (every kv::KvType has one; cuda/ops/ops.cuh KvDtype).
inline cuda::KvDtype device_kv_type(kv::KvType t) {
  switch (t) {
    case kv::KvType::kF16: return cuda::KvDtype::kF16;
    case kv::KvType::kBF16: return cuda::KvDtype::kBF16;
    case kv::KvType::kQ8_0: return cuda::KvDtype::kQ8_0;
    case kv::KvType::kQ4_0: return cuda::KvDtype::kQ4_0;
    case kv::KvType::kFp8E4M3: return cuda::KvDtype::kFp8E4M3;
    case kv::KvType::kF32: break;
  }
  return cuda::KvDtype::kF32;
}

using arch::AttentionBlock;
using arch::MlpBlock;
using arch::ModelGraph;
using arch::Norm;

constexpr int kStep = cuda::kGemvMaxTokens;  // tokens per decode-style pass (GEMV)

// Timing ablation, a diagnostic for synthetic-model bench rows only: BW24_ABLATE=part,part,...
// leaves those launches out of one-token passes, so the tg row's change is what they cost inside
// the captured graph (ncu times kernels one at a time, without the PDL overlap of the graph).
// The tokens are then garbage. Parts: norm (rmsnorm_q8 and the rest of the GEMV input
// preparation), qkv, rope (q/k norm + RoPE + KV store), attn (flash decode), o, gateup, down,
// lmhead, moe (a whole MoE block), deltanet (a whole delta-net mixer), normed / actq (only the GEMV
// inputs with a norm / only those without: the int8 launch before a dense down), and inside a MoE block:
// moegate (the router launch), moeup (the routed gate-up), moedown (the routed down projection
// with its input's quantization and the combine).
enum AblatePart : unsigned {
  kAblNorm = 1, kAblQkv = 2, kAblRope = 4, kAblAttn = 8, kAblO = 16, kAblGateUp = 32, kAblDown = 64, kAblLmHead = 128,
  kAblMoe = 256, kAblDeltaNet = 512, kAblMoeGate = 1024, kAblMoeUp = 2048, kAblMoeDown = 4096, kAblNormed = 8192,
  kAblActQ = 16384
};
inline unsigned ablated_parts() {
  static const unsigned parts = [] {
    const char* e = std::getenv("BW24_ABLATE");
    if (!e) return 0u;
    const std::string v = std::string(",") + e + ",";
    unsigned m = 0;
    const std::pair<const char*, unsigned> names[] = {{",norm,", kAblNorm}, {",qkv,", kAblQkv},     {",rope,", kAblRope},
                                                      {",attn,", kAblAttn}, {",o,", kAblO},         {",gateup,", kAblGateUp},
                                                      {",down,", kAblDown}, {",lmhead,", kAblLmHead},
                                                      {",moe,", kAblMoe},   {",deltanet,", kAblDeltaNet},
                                                      {",moegate,", kAblMoeGate}, {",moeup,", kAblMoeUp},
                                                      {",moedown,", kAblMoeDown}, {",normed,", kAblNormed},
                                                      {",actq,", kAblActQ}};
    for (const auto& [name, bit] : names)
      if (v.find(name) != std::string::npos) m |= bit;
    return m;
  }();
  return parts;
}
inline bool ablate(unsigned part, int n) { return n == 1 && (ablated_parts() & part) != 0; }
// The integer value of a timing hook's environment variable, or fallback where it is not set.
inline int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e ? std::atoi(e) : fallback;
}
// Timing hook: BW24_GRAPH_REPLAYS=k launches the captured step k times a decode call (the same
// position and token; the output is then wrong), so that t(k) - t(1) is the replays back to back and
// t(1) minus that the host's part of a step.
// Only forward_passes' one-token steps take it; steps queued ahead (queue_step, the session's
// run-ahead decoding, which bw24-bench's tg rows use) launch the graph once (round 48 measured no change).
inline int graph_replays() {
  static const int n = std::max(1, env_int("BW24_GRAPH_REPLAYS", 1));
  return n;
}
// Timing hook beside it: BW24_FLASH_HEAD_GROUPS=n has every flash decode call spread a KV head's
// query heads over n CTAs a split (cuda::flash_decode head_groups; a divisor of the group, else the
// call's own choice), so bench rows compare groupings at any depth with one binary. Same bits.
inline int forced_head_groups(int group) {
  static const int n = env_int("BW24_FLASH_HEAD_GROUPS", 0);
  return n > 0 && group % n == 0 ? n : 0;
}
// A one-token step's Q + K and V launches overlap (cuda::GemvChain; H200 tg128, next200: Qwen3-30B-A3B
// 552.3 / 551.2 -> 565.7 / 565.3, Qwen3-8B +0.2 %; at every position since round 64, products() says why).
// A/B switch: BW24_QKV_OVERLAP=0 chains them plainly.
inline bool qkv_overlap() {
  static const bool on = env_int("BW24_QKV_OVERLAP", 1) != 0;
  return on;
}
// A/B switch (tools/wip next198): BW24_ROPE_TABLE=0 has a one-token step's flash decode compute its
// rope angles in every CTA before its PDL wait, as before rope_table.
inline bool rope_table_on() {
  static const bool on = env_int("BW24_ROPE_TABLE", 1) != 0;
  return on;
}
// A/B switch (tools/wip next249): BW24_RUN_AHEAD=0 has the session wait for each step's token before
// it queues the next (Runner::queue_step closed), as before run-ahead decoding.
inline bool run_ahead_on() {
  static const bool on = env_int("BW24_RUN_AHEAD", 1) != 0;
  return on;
}
// A/B switch (tools/wip next250): BW24_TOKEN_COPY=1 has a step's choice (queued or not: read_token)
// copied back by a 4-byte copy behind the choice kernel, instead of stored into pinned memory by the
// kernel itself (H200, next250: the store +0.4 % on Qwen3-8B Q4_K_M tg128, +0.5 % on Qwen3-30B-A3B;
// next258: +0.4 % on the step-by-step path, BW24_RUN_AHEAD=0).
inline bool token_copy_on() {
  static const bool on = env_int("BW24_TOKEN_COPY", 0) != 0;
  return on;
}
// Tokens per prefill pass (GEMM, tensor cores) on models whose layer weights the GEMM takes. 512:
// the bf16 expansion of the weights (once per pass) costs about a third of a 512-token pass on
// Qwen3-8B Q4_K_M; longer passes amortize it further but grow the activation buffers.
constexpr int kChunk = 512;
// Cap of the bf16 scratch that quantized weights are expanded into: a layer's Q, K and V (or gate
// and up) together when they fit, so one GEMM launch covers them; else a slice of rows at a time.
// Qwen3-8B's gate + up need 100 M elements.
constexpr int64_t kScratchElems = int64_t{128} << 20;  // 256 MB

// The input of a matrix product: f32 activations and, on models with int8-path weights, the same
// rows quantized (rmsnorm_q8); in a prefill pass (GEMM) only bf16 rows. Which one a product
// reads depends on the pass and the weight type.
struct GemvIn {
  const float* x;
  cuda::ActQ8 q8;
  const cuda::bf16* bf;
};

// A whole pass (up to chunk_ tokens) is a fixed sequence of launches on one stream. The one-token
// step is captured into a CUDA graph on first use and replayed after: the host then does one
// embedding gather, one graph launch and one logits copy per token (the position lives in device
// memory, so one graph serves every position of its regime: two graphs, below and from
// cuda::kFlashDecodeMergeFrom, the first without flash decode's merge launch).
class CudaRunner final : public Runner {
 public:
  CudaRunner(const ModelGraph& g, const DeviceWeights& w, const RunnerOptions& opt) : g_(g), w_(w), opt_(opt) {}
  ~CudaRunner() override {
    cudaSetDevice(w_.device());
    for (cudaGraphExec_t& g : graph_exec_)
      if (g) cudaGraphExecDestroy(g);
    if (stream_) cudaStreamSynchronize(stream_);  // queued steps still copy into ring_
    for (cudaEvent_t ev : ring_done_)
      if (ev) cudaEventDestroy(ev);
    if (ahead_.stream) {
      cudaStreamSynchronize(ahead_.stream);
      cudaStreamDestroy(ahead_.stream);
      for (cudaEvent_t ev : {ahead_.expanded[0], ahead_.expanded[1], ahead_.used[0], ahead_.used[1]})
        if (ev) cudaEventDestroy(ev);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }

  absl::Status init();

  bool device_argmax() const override { return true; }
  absl::Status last_logits(float* out) override;
  uint64_t state_bytes() const override;

  // Delta-net layers (Qwen3.5 / Qwen3-Next): the recurrent state covers positions [0, state_pos_)
  // and cannot step back; the session resets and replays on rewind (runner.h).
  bool recurrent() const override { return !dn_states_.empty(); }
  void reset() override;
  absl::Status forward(const ForwardRequest& req) override;

  // ---- Run-ahead decoding (Runner::queue_step) ----
  bool can_queue_steps(bool armed) const override;
  absl::Status queue_step(const QueuedStep& s) override;
  absl::Status finish_step(int32_t* choice) override;
  absl::Status drop_step() override;
  void abandon_steps() override;

 private:
  absl::StatusOr<int> oldest_step();
  absl::Status init_step_queue();
  absl::Status forward_passes(const ForwardRequest& req);
  absl::Status pass(int n, cuda::DevicePos pos, int first, float* logits_host);
  absl::Status read_token(const float* dev, const ForwardRequest& req);
  absl::Status capture_step(int regime);

  cuda::KvTypes kv_types() const { return {device_kv_type(opt_.k_type), device_kv_type(opt_.v_type)}; }
  const float* f32(const arch::Weight& w) const { return static_cast<const float*>(w_.at(w.t)); }
  bool is_bf16(const arch::Weight& w) const { return w_.type_of(w.t) == static_cast<uint32_t>(GgmlType::BF16); }
  // bf16 elements the GEMM needs expanded for w (BF16 weights are read in place); for stacked
  // experts, expert_elems: per expert of the stacks together.
  int64_t expanded_elems(const arch::Weight& w) const { return !w || is_bf16(w) ? 0 : w.rows() * w.cols(); }
  int64_t expert_elems(std::initializer_list<const arch::Weight*> stacks) const;
  bool is_q8(const arch::Weight& w) const { return cuda::gemv_q8_supports(w_.type_of(w.t)); }

  absl::StatusOr<GemvIn> prepare(const Norm* nm, const float* src, int rows, int width);
  // The norm of a block whose one-token products all take a folded input (null: none), decided at init
  // into fold_attn_ / fold_mlp_; folds_norms: the session's and the kernels' switch, and the buffers.
  bool folds_norms() const;
  const Norm* fold_target_attention(const arch::Layer& L) const;
  const Norm* fold_target_mlp(const MlpBlock& m) const;
  absl::StatusOr<GemvIn> gemv_input(const Norm* nm, const float* src, int rows, int width);
  absl::Status norm(const Norm& nm, float* y, const float* x, int rows, int width);

  // A product over stacked experts routed by moe_.ids (cuda/gemv GemvRoute): `pairs` rows out,
  // x_div = n_used when every expert of a token reads the token's row, 1 when each pair has its own.
  struct Routing {
    int pairs, x_div;
  };

  // room: the next launch's CTA, for a streamed GEMV to leave room for (cuda::CtaRoom, gemv.cuh).
  absl::Status matmul(const arch::Weight& w, const GemvIn& in, int n, float* y, cuda::GemvOut out,
                      const arch::Weight* w2 = nullptr, int act = 0, const Routing* routing = nullptr,
                      const cuda::CtaRoom* room = nullptr);

  // y_i [n][rows_i] = a [n][cols] W_i^T on the tensor cores for weights of one width over the
  // same rows: one launch when every non-BF16 weight of the group fits wscratch_ expanded (BF16
  // weights are read in place); else one weight at a time, expanded in slices of rows.
  struct GemmJob {
    const arch::Weight* w;
    float* y;
  };
  absl::Status gemm(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int n, cuda::GemvOut out);

  // ---- Weight expansion one GEMM ahead (prefill) ----
  // A prefill pass expands every quantized weight to bf16 before its GEMM (~7 of ~37 ms of a
  // Qwen3-8B Q4_K_M pp512 pass on the H200). The expansion is bound by memory and the GEMM by the
  // tensor cores, so the next group's expansion runs on a side stream into the other of two
  // scratch buffers while this group's GEMM (and the attention after it) runs. The plan is every
  // layer's attention or delta-net products and dense MLP groups in forward order; any other
  // product (the MoE experts, a router), or a call off the plan, expands in line into the buffer
  // that is not being written ahead (free_scratch), so the expansion ahead stays valid across it.
  // Events: expanded[b] = buffer b's expansion ahead is done; used[b] = the last GEMM reading b.
  struct Ahead {
    cudaStream_t stream = nullptr;
    cudaEvent_t expanded[2] = {}, used[2] = {};
    std::vector<std::vector<const arch::Weight*>> plan;  // groups as gemm() receives them
    int pending = -1, pending_buf = 0;                    // the plan group expanding ahead, its buffer
  };
  absl::Status init_ahead();
  cuda::bf16* scratch(int buf) const { return buf == 0 ? wscratch_.p : wscratch2_.p; }
  absl::Status expand(const arch::Weight& w, int64_t offset, int buf, cudaStream_t s);
  int plan_index(std::initializer_list<GemmJob> jobs);
  absl::Status expand_ahead(int at, int buf);
  // The buffer stream_ may write now: not the one the side stream is expanding into. (Expansions
  // ahead that were consumed have been waited for; stream_ orders its own reads and writes.)
  int free_scratch() const { return ahead_.pending >= 0 ? 1 - ahead_.pending_buf : 0; }
  absl::Status used_scratch(int buf);
  uint32_t fused_type(std::initializer_list<GemmJob> jobs) const;
  absl::Status qkv(const AttentionBlock& a, const GemvIn& in, int n, bool split);
  absl::Status qkv_products(const AttentionBlock& a, const GemvIn& in, int n);
  absl::Status products(const GemmJob* jobs, int count, const GemvIn& in, int n);
  absl::Status output_projection(const arch::Weight& w, const GemvIn& in, const Norm& post_norm, int n,
                                 const cuda::CtaRoom* room = nullptr);
  // The room the MoE block's router launch needs beside the output projection before it (one token,
  // the cluster router; else none), by moe()'s choices (router_fused, router_takes_norm).
  cuda::CtaRoom router_room(const MlpBlock& m, int n) const;
  absl::Status attention(const AttentionBlock& a, int layer, int n, cuda::DevicePos pos, const cuda::CtaRoom& room);

  // ---- Gated delta net layers ----
  absl::Status check_delta_net(const arch::DeltaNetBlock& b) const;
  absl::Status init_delta_net_states();
  absl::Status delta_net(const arch::DeltaNetBlock& b, size_t il, int n, const cuda::CtaRoom& room);

  // ---- Mixture-of-experts layers ----
  absl::Status check_moe(const arch::MoeBlock& e) const;
  absl::Status moe(const MlpBlock& m, int n);
  // Whether the router is one moe_gate launch (F32 / F16 / BF16 rows), and whether that launch also
  // does the block's input norm (one token, RunnerOptions::fused_moe_norm).
  bool router_fused(const arch::MoeBlock& e, int n) const;
  bool router_takes_norm(const arch::MoeBlock& e, int n) const;
  absl::Status moe_experts(const MlpBlock& m, const GemvIn& in, int n);
  absl::Status moe_prefill(const MlpBlock& m, const cuda::bf16* a, int n);

  // Bytes of one expert of a stacked expert weight.
  static int64_t expert_bytes(const arch::Weight& w) { return int64_t(w.t->n_bytes / uint64_t(w.t->ne[2])); }

  bool q8_grouped(std::initializer_list<const arch::Weight*> ws) const;
  absl::Status grouped_q8(std::initializer_list<GemmJob> jobs, int a_div, bool c_scatter, int pairs, int n_expert);

  absl::Status grouped(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int a_div, bool c_scatter, int pairs,
                       int n_expert);

  absl::Status gate_up(const arch::Weight& gate, const arch::Weight& up, const GemvIn& in, int n, float* y,
                       float* up_buf, int act, const Routing* routing = nullptr);

  absl::Status mlp(const MlpBlock& m, int n);

  const ModelGraph& g_;
  const DeviceWeights& w_;
  RunnerOptions opt_;
  cudaStream_t stream_ = nullptr;
  // The captured one-token step, by regime: [0] for positions below cuda::kFlashDecodeMergeFrom (no
  // flash-decode merge launch: a boundary a layer less), [1] at and above; each captured on first use.
  cudaGraphExec_t graph_exec_[2] = {nullptr, nullptr};
  int64_t step_max_pos_ = -1;  // while capturing regime 0: the bound flash_decode is told (max_pos)
  const int32_t* step_hold_ = nullptr;  // while capturing with device_embed_: hold_dev_ (cuda::StepNext)
  int64_t kv_width_ = 0;
  bool any_gated_ = false;           // some attention layer has an output gate (Qwen3.5)
  int64_t state_pos_ = 0;            // delta-net models: the position the recurrent state has reached
  bool uses_q8_ = false;             // some GEMV weight is on the int8 path
  bool gemm_ = false;                // every layer weight takes the prefill GEMM
  int chunk_ = kStep;                // rows of the activation buffers: tokens per pass at most
  int64_t scratch_elems_ = 0;        // of wscratch_
  PinnedArray<float> emb_;           // embedding rows of the pass, [chunk_][n_embd]
  // Run-ahead decoding (queue_step): the captured step gathers its row itself (device_embed_);
  // hold_dev_ holds a step (cuda::StepNext), whose embedding launch saves logits_ into
  // logits_keep_ (last_logits reads it after drop_step: logits_kept_). Queued steps' choices land
  // in ring_ (pinned, two slots from ring_head_, their events in ring_done_, their positions).
  bool device_embed_ = false, delta_nets_hold_ = false, logits_kept_ = false;
  cuda::StepNext armed_next_;  // the stop tokens of a step queued with stop_armed (set at init)
  DeviceArray<int32_t> hold_dev_;
  DeviceArray<float> logits_keep_;
  PinnedArray<int32_t> ring_;
  cudaEvent_t ring_done_[2] = {nullptr, nullptr};
  int64_t ring_pos_[2] = {0, 0};
  int ring_head_ = 0, queued_ = 0;
  PinnedArray<int64_t> pos_host_;    // the position the captured step copies up
  DeviceArray<int64_t> pos_dev_;
  PinnedArray<int32_t> token_host_;  // the greedy token of the last forward
  DeviceArray<int32_t> token_dev_;
  DeviceArray<float> x_, h_, proj_, q_, k_, v_, o_, gate_, up_, logits_, scores_, flash_scratch_;
  DeviceArray<int8_t> act_q_;
  DeviceArray<float2> act_ds_;
  size_t act_row_ = 0;  // act_q_'s row stride (the widest GEMV input); ds rows are act_row_ / 32
  // A one-token step's folded norms (cuda::gemv_q8_add_normed): the O projection or the down writes the
  // next norm's input into these (x w in int8, the sums of squares by 16 rows), and that norm's
  // products apply 1 / rms themselves; its rmsnorm_q8 launch goes. fold_next_: the norm the next
  // output projection may fold (pass() sets it where every product after it takes a folded input);
  // folded_: the norm whose input the last one wrote, taken by gemv_input.
  DeviceArray<int8_t> fold_q_;
  DeviceArray<float2> fold_ds_;
  DeviceArray<float> fold_parts_;
  const Norm* fold_next_ = nullptr;
  const Norm* folded_ = nullptr;
  std::vector<const Norm*> fold_attn_, fold_mlp_;  // per layer: its attention / FFN norm where a step folds it
  DeviceArray<cuda::bf16> act_bf_, wscratch_;  // GEMM input rows; quantized weights expanded
  DeviceArray<cuda::bf16> wscratch2_;          // the second buffer of the expansion ahead
  Ahead ahead_;
  std::vector<std::unique_ptr<DeviceArray<uint8_t>>> kc_, vc_;  // [n_ctx][n_head_kv * head_dim] of kv_types()
  std::vector<std::unique_ptr<DeviceArray<double>>> inv_freq_;  // per layer, [rope_dims / 2]
  DeviceArray<cuda::RopeTableLayer> rope_layers_;               // per layer: inv_freq_, theta, rope_dims
  DeviceArray<float2> rope_angles_;                             // a one-token step's (cos, sin), [layer][rope_stride_]
  int64_t rope_stride_ = 0;                                     // the largest rope_dims / 2
  bool rope_table_step(int n) const;
  DeviceArray<float> qg_, attn_gate_;                          // gated attention: raw q projection, gate
  // Delta-net layers: activations (qkv projection, conv output, z, b, a, gated-norm output) and
  // per layer the states (DeltaNetState); dn_index_[layer] indexes dn_states_ (-1: attention).
  struct DeltaNetState {
    DeviceArray<float> conv, ssm, taps, neg_a;
    DeviceArray<unsigned> turn;  // gdn_decode's counters, one a key head: zero between calls
    size_t conv_elems = 0, ssm_elems = 0;
  };
  DeviceArray<float> dn_qkv_, dn_y_, dn_z_, dn_out_, dn_b_, dn_a_;
  // MoE layers: the largest expert count, experts per token and expert width over the layers, and
  // the pass buffers: router logits [chunk_][experts], per pair (t * used + j) the expert id and
  // weight, the routed gate (then activation) and up rows [pairs][ff], expert outputs
  // [pairs][n_embd], the shared expert's gate logit per token.
  struct MoeBuffers {
    int32_t experts = 0, used = 0;
    int64_t ff = 0;
    DeviceArray<float> logits, weights, gate, up, out, shared_gate;
    DeviceArray<int32_t> ids;
    DeviceArray<unsigned> gate_counter;  // moe_gate's count of finished CTAs (zero between launches)
    // Prefill (grouped GEMM): pairs sorted by expert, per-expert row offsets and first tiles, tiles.
    DeviceArray<int32_t> sorted, offsets, tile_start;
    DeviceArray<int2> tiles;
  } moe_;
  std::vector<DeltaNetState> dn_states_;
  std::vector<int> dn_index_;
};

}  // namespace bw24::engine::cuda_runner_detail
