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

namespace bw24::engine {
namespace {

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Runner.
// ---------------------------------------------------------------------------------------------
namespace {

// The device cache type of a session KV type (every kv::KvType has one; cuda/ops/ops.cuh KvDtype).
cuda::KvDtype device_kv_type(kv::KvType t) {
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
// lmhead, moe (a whole MoE block), deltanet (a whole delta-net mixer), and inside a MoE block:
// moegate (the router launch), moeup (the routed gate-up), moedown (the routed down projection
// with its input's quantization and the combine).
enum AblatePart : unsigned {
  kAblNorm = 1, kAblQkv = 2, kAblRope = 4, kAblAttn = 8, kAblO = 16, kAblGateUp = 32, kAblDown = 64, kAblLmHead = 128,
  kAblMoe = 256, kAblDeltaNet = 512, kAblMoeGate = 1024, kAblMoeUp = 2048, kAblMoeDown = 4096
};
unsigned ablated_parts() {
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
                                                      {",moedown,", kAblMoeDown}};
    for (const auto& [name, bit] : names)
      if (v.find(name) != std::string::npos) m |= bit;
    return m;
  }();
  return parts;
}
bool ablate(unsigned part, int n) { return n == 1 && (ablated_parts() & part) != 0; }
// The integer value of a timing hook's environment variable, or fallback where it is not set.
int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e ? std::atoi(e) : fallback;
}
// Timing hook: BW24_GRAPH_REPLAYS=k launches the captured step k times a decode call (the same
// position and token; the output is then wrong), so that t(k) - t(1) is the replays back to back and
// t(1) minus that the host's part of a step.
int graph_replays() {
  static const int n = std::max(1, env_int("BW24_GRAPH_REPLAYS", 1));
  return n;
}
// Timing hook beside it: BW24_FLASH_HEAD_GROUPS=n has every flash decode call spread a KV head's
// query heads over n CTAs a split (cuda::flash_decode head_groups; a divisor of the group, else the
// call's own choice), so bench rows compare groupings at any depth with one binary. Same bits.
int forced_head_groups(int group) {
  static const int n = env_int("BW24_FLASH_HEAD_GROUPS", 0);
  return n > 0 && group % n == 0 ? n : 0;
}
// A one-token step's Q + K and V launches overlap below position 1,024 (cuda::GemvChain; H200 tg128,
// next200: Qwen3-30B-A3B 552.3 / 551.2 -> 565.7 / 565.3, Qwen3-8B +0.2 %). A/B switch:
// BW24_QKV_OVERLAP=0 chains them plainly.
bool qkv_overlap() {
  static const bool on = env_int("BW24_QKV_OVERLAP", 1) != 0;
  return on;
}
// A/B switch (tools/wip next198): BW24_ROPE_TABLE=0 has a one-token step's flash decode compute its
// rope angles in every CTA before its PDL wait, as before rope_table.
bool rope_table_on() {
  static const bool on = env_int("BW24_ROPE_TABLE", 1) != 0;
  return on;
}
// A/B switch (tools/wip next249): BW24_RUN_AHEAD=0 has the session wait for each step's token before
// it queues the next (Runner::queue_step closed), as before run-ahead decoding.
bool run_ahead_on() {
  static const bool on = env_int("BW24_RUN_AHEAD", 1) != 0;
  return on;
}
// A/B switch (tools/wip next250): BW24_TOKEN_COPY=1 has a step's choice (queued or not: read_token)
// copied back by a 4-byte copy behind the choice kernel, instead of stored into pinned memory by the
// kernel itself (H200, next250: the store +0.4 % on Qwen3-8B Q4_K_M tg128, +0.5 % on Qwen3-30B-A3B;
// next258: +0.4 % on the step-by-step path, BW24_RUN_AHEAD=0).
bool token_copy_on() {
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

  absl::Status init() {
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
    BW24_RETURN_IF_ERROR(act_q_.alloc(C * widest, "activations"));
    BW24_RETURN_IF_ERROR(act_ds_.alloc(C * widest / 32 + 1, "activations"));
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

  bool device_argmax() const override { return true; }
  // The last forward's last row is logits_'s first (pass() computes it last; the captured step
  // writes it there).
  absl::Status last_logits(float* out) override {
    BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
    const float* row = logits_kept_ ? logits_keep_.p : logits_.p;
    BW24_CUDA_OK(cudaMemcpyAsync(out, row, size_t(g_.n_vocab) * 4, cudaMemcpyDeviceToHost, stream_), "logits");
    return cuda_status(cudaStreamSynchronize(stream_), "logits");
  }

  uint64_t state_bytes() const override {
    uint64_t n = 0;
    for (const auto& L : g_.layers)
      if (!L.recurrent)
        n += uint64_t(cuda::kv_cache_bytes(kv_types().k, opt_.n_ctx, kv_width_) +
                      cuda::kv_cache_bytes(kv_types().v, opt_.n_ctx, kv_width_));
    for (const auto& st : dn_states_) n += (st.conv_elems + st.ssm_elems) * 4;
    return n;
  }

  // Delta-net layers (Qwen3.5 / Qwen3-Next): the recurrent state covers positions [0, state_pos_)
  // and cannot step back; the session resets and replays on rewind (runner.h).
  bool recurrent() const override { return !dn_states_.empty(); }
  void reset() override {
    cudaSetDevice(w_.device());
    for (auto& st : dn_states_) {
      cudaMemsetAsync(st.conv.p, 0, st.conv_elems * 4, stream_);
      cudaMemsetAsync(st.ssm.p, 0, st.ssm_elems * 4, stream_);
    }
    cudaStreamSynchronize(stream_);
    state_pos_ = 0;
  }

  absl::Status forward(const ForwardRequest& req) override {
    BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
    if (recurrent() && req.pos != state_pos_)
      return error(Code::kState, "the recurrent state is at position {}, not {}", state_pos_, req.pos);
    if (queued_ > 0) return error(Code::kState, "{} decode steps are still queued", queued_);
    logits_kept_ = false;
    BW24_RETURN_IF_ERROR(forward_passes(req));
    state_pos_ = req.pos + req.n;
    return absl::OkStatus();
  }

  // ---- Run-ahead decoding (Runner::queue_step) ----
  // A queued step is set_step (a host token) or nothing (the previous step's choice wrote the
  // token, the position and the hold flag: cuda::StepNext), the captured step, the choice with
  // StepNext for the step behind (which also stores the choice into its pinned ring_ slot), and
  // an event. The host then waits on the older step's event while the newer one is already on the
  // stream.
  bool can_queue_steps(bool armed) const override {
    return device_embed_ && opt_.run_ahead && run_ahead_on() && (!recurrent() || delta_nets_hold_) &&
           (!armed || opt_.stop_tokens.size() <= size_t(cuda::kStepMaxStops));
  }

  absl::Status queue_step(const QueuedStep& s) override {
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

  absl::Status finish_step(int32_t* choice) override {
    BW24_ASSIGN_OR_RETURN(const int slot, oldest_step());
    *choice = *static_cast<volatile const int32_t*>(ring_.p + slot);
    state_pos_ = ring_pos_[slot] + 1;
    return absl::OkStatus();
  }

  absl::Status drop_step() override {
    BW24_RETURN_IF_ERROR(oldest_step().status());
    logits_kept_ = true;  // the held step saved its predecessor's row into logits_keep_
    return absl::OkStatus();
  }

  void abandon_steps() override {
    cudaSetDevice(w_.device());
    cudaStreamSynchronize(stream_);
    queued_ = 0;
    logits_kept_ = false;
  }

 private:
  // Waits for the oldest queued step and takes it off the ring: its slot.
  absl::StatusOr<int> oldest_step() {
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
  absl::Status init_step_queue() {
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

  absl::Status forward_passes(const ForwardRequest& req) {
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
  absl::Status pass(int n, cuda::DevicePos pos, int first, float* logits_host) {
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
    for (size_t il = 0; il < g_.layers.size(); ++il) {
      const arch::Layer& L = g_.layers[il];
      if (L.recurrent) {
        if (!ablate(kAblDeltaNet, n)) BW24_RETURN_IF_ERROR(delta_net(L.delta_net, il, n));
      } else {
        BW24_RETURN_IF_ERROR(attention(L.attn, static_cast<int>(il), n, pos));
      }
      BW24_RETURN_IF_ERROR(mlp(L.mlp, n));
    }
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
  absl::Status read_token(const float* dev, const ForwardRequest& req) {
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
  absl::Status capture_step(int regime) {
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

  cuda::KvTypes kv_types() const { return {device_kv_type(opt_.k_type), device_kv_type(opt_.v_type)}; }
  const float* f32(const arch::Weight& w) const { return static_cast<const float*>(w_.at(w.t)); }
  bool is_bf16(const arch::Weight& w) const { return w_.type_of(w.t) == static_cast<uint32_t>(GgmlType::BF16); }
  // bf16 elements the GEMM needs expanded for w (BF16 weights are read in place); for stacked
  // experts, expert_elems: per expert of the stacks together.
  int64_t expanded_elems(const arch::Weight& w) const { return !w || is_bf16(w) ? 0 : w.rows() * w.cols(); }
  int64_t expert_elems(std::initializer_list<const arch::Weight*> stacks) const {
    int64_t n = 0;
    for (const arch::Weight* w : stacks) n += is_bf16(*w) ? 0 : w->rows() * w->cols();
    return n;
  }
  bool is_q8(const arch::Weight& w) const { return cuda::gemv_q8_supports(w_.type_of(w.t)); }

  // RMSNorm (nm null: none) of rows x width activations into the input buffers of the next
  // product. GEMV (rows <= kStep): gemv_input. GEMM (rows > kStep): bf16 into act_bf_.
  absl::StatusOr<GemvIn> prepare(const Norm* nm, const float* src, int rows, int width) {
    if (rows <= kStep) return gemv_input(nm, src, rows, width);
    BW24_CUDA_OK(cuda::rmsnorm_bf16(act_bf_.p, src, nm ? f32(nm->w) : nullptr, rows, width, g_.norm_eps,
                                    nm && nm->one_plus, stream_),
                 "GEMM input (rmsnorm / bf16)");
    return GemvIn{nullptr, {}, act_bf_.p};
  }

  // The GEMV input of rows x width activations (any row count: the routed down projection takes
  // kStep x n_used rows): f32 into h_ (or src itself without a norm), int8 alongside when the
  // model has int8-path weights.
  absl::StatusOr<GemvIn> gemv_input(const Norm* nm, const float* src, int rows, int width) {
    const float* w = nm ? f32(nm->w) : nullptr;
    const bool one_plus = nm && nm->one_plus;
    cudaError_t e = cudaSuccess;
    if (!ablate(kAblNorm, rows)) {
      if (uses_q8_ && width % 32 == 0)
        e = cuda::rmsnorm_q8(nm ? h_.p : nullptr, act_q_.p, act_ds_.p, src, w, rows, width, g_.norm_eps, one_plus, stream_);
      else if (nm)
        e = cuda::rmsnorm(h_.p, src, w, rows, width, g_.norm_eps, one_plus, stream_);
    }
    BW24_CUDA_OK(e, "GEMV input (rmsnorm / int8 quantize)");
    return GemvIn{nm ? h_.p : src, {act_q_.p, act_ds_.p}, nullptr};
  }

  absl::Status norm(const Norm& nm, float* y, const float* x, int rows, int width) {
    return cuda_status(cuda::rmsnorm(y, x, f32(nm.w), rows, width, g_.norm_eps, nm.one_plus, stream_), "rmsnorm");
  }

  // A product over stacked experts routed by moe_.ids (cuda/gemv GemvRoute): `pairs` rows out,
  // x_div = n_used when every expert of a token reads the token's row, 1 when each pair has its own.
  struct Routing {
    int pairs, x_div;
  };

  // y = W in (or +=, see cuda::GemvOut) for the n rows of a pass: the GEMM when the input is
  // bf16 (a prefill pass), else the GEMV, which also takes the gate-up pair (w2) in one launch
  // and, with `routing`, stacked experts (n rows of input, routing->pairs rows out).
  absl::Status matmul(const arch::Weight& w, const GemvIn& in, int n, float* y, cuda::GemvOut out,
                      const arch::Weight* w2 = nullptr, int act = 0, const Routing* routing = nullptr) {
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
                        stream_, r);
    else
      e = cuda::gemv(w_.at(w.t), type, w.rows(), w.cols(), in.x, n, y, out, stream_, r);
    if (e != cudaSuccess) return error(Code::kDevice, "CUDA gemv of '{}': {}", w.t->name, cudaGetErrorString(e));
    return absl::OkStatus();
  }

  // y_i [n][rows_i] = a [n][cols] W_i^T on the tensor cores for weights of one width over the
  // same rows: one launch when every non-BF16 weight of the group fits wscratch_ expanded (BF16
  // weights are read in place); else one weight at a time, expanded in slices of rows.
  struct GemmJob {
    const arch::Weight* w;
    float* y;
  };
  absl::Status gemm(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int n, cuda::GemvOut out) {
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
  absl::Status init_ahead() {
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
  cuda::bf16* scratch(int buf) const { return buf == 0 ? wscratch_.p : wscratch2_.p; }
  // w expanded to bf16 at element `offset` of scratch buffer buf, on stream s (BF16 weights are read
  // in place and take no room: expanded_elems 0).
  absl::Status expand(const arch::Weight& w, int64_t offset, int buf, cudaStream_t s) {
    if (is_bf16(w)) return absl::OkStatus();
    return cuda_status(cuda::dequant_bf16(w_.at(w.t), w_.type_of(w.t), w.rows(), w.cols(), 0, w.rows(),
                                          scratch(buf) + offset, s),
                       "weight expansion");
  }
  int plan_index(std::initializer_list<GemmJob> jobs) {
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
  absl::Status expand_ahead(int at, int buf) {
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
  // The buffer stream_ may write now: not the one the side stream is expanding into. (Expansions
  // ahead that were consumed have been waited for; stream_ orders its own reads and writes.)
  int free_scratch() const { return ahead_.pending >= 0 ? 1 - ahead_.pending_buf : 0; }
  absl::Status used_scratch(int buf) {
    if (ahead_.stream) BW24_CUDA_OK(cudaEventRecord(ahead_.used[buf], stream_), "expansion ahead");
    return absl::OkStatus();
  }

  // The weight type of jobs when they all share one the grouped GEMM expands itself
  // (cuda::gemm_fused_supports), else 0. Dense products expand into the scratch instead: with
  // every token tile of a pass expanding the same weights again, the fused tiles measured slower
  // (Qwen3-8B Q4_K_M on the H200: pp512 7577 fused / 13591 tok/s; pp48 1443 / 1705).
  uint32_t fused_type(std::initializer_list<GemmJob> jobs) const {
    const uint32_t t = w_.type_of(jobs.begin()->w->t);
    for (const GemmJob& j : jobs)
      if (w_.type_of(j.w->t) != t) return 0;
    return cuda::gemm_fused_supports(t) ? t : 0;
  }

  // Q, K and V. Prefill: one GEMM launch. Decode: the int8-path ones that share a type in one
  // launch (Q4_K_M keeps some attn_v in Q6_K: then Q and K together and V alone), the rest one by one.
  // split: a gated layer's Q product into q_ and attn_gate_ (not when flash decode reads it in place).
  absl::Status qkv(const AttentionBlock& a, const GemvIn& in, int n, bool split) {
    if (ablate(kAblQkv, n)) return absl::OkStatus();
    BW24_RETURN_IF_ERROR(qkv_products(a, in, n));
    if (!a.gated || !split) return absl::OkStatus();
    return cuda_status(cuda::split_q_gate(q_.p, attn_gate_.p, qg_.p, n, a.n_head, a.head_dim, stream_), "q/gate split");
  }
  absl::Status qkv_products(const AttentionBlock& a, const GemvIn& in, int n) {
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
  absl::Status products(const GemmJob* jobs, int count, const GemvIn& in, int n) {
    constexpr int kMaxProducts = 4;
    if (count > kMaxProducts) return error(Code::kInternal, "products of {} weights (at most {})", count, kMaxProducts);
    bool done[kMaxProducts] = {};
    // Int8 launches of one token over the same input overlap (cuda::GemvChain): the first waits
    // before it lets the next start, where another int8 launch follows it; the next ones read the
    // input without waiting. Only in the short-history graph (step_max_pos_ set, no merge launch):
    // from position 1,024 on, flash decode prefetches the history before its wait and gains from
    // starting early, as V's immediate trigger in a plain chain lets it (Qwen3-30B-A3B at depth
    // 4096, next202: plain 463.6 / 462.6, overlapping 457.3 / 457.0).
    const bool overlap = n == 1 && step_max_pos_ >= 0 && qkv_overlap();
    bool chained = false;  // the first launch took kWaitFirst
    int launches = 0;
    for (int i = 0; i < count && !in.bf; ++i) {
      const uint32_t type = w_.type_of(jobs[i].w->t);
      const bool q8 = is_q8(*jobs[i].w);
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
  absl::Status output_projection(const arch::Weight& w, const GemvIn& in, const Norm& post_norm, int n) {
    const int E = g_.n_embd;
    if (!post_norm.w) return matmul(w, in, n, x_.p, cuda::GemvOut::kAdd);
    BW24_RETURN_IF_ERROR(matmul(w, in, n, proj_.p, cuda::GemvOut::kStore));
    BW24_RETURN_IF_ERROR(norm(post_norm, proj_.p, proj_.p, n, E));
    return cuda_status(cuda::add_inplace(x_.p, proj_.p, int64_t{n} * E, stream_), "residual");
  }

  absl::Status attention(const AttentionBlock& a, int layer, int n, cuda::DevicePos pos) {
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
    return output_projection(a.wo, oin, a.post_norm, n);
  }

  // ---- Gated delta net layers ----
  absl::Status check_delta_net(const arch::DeltaNetBlock& b) const {
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
  absl::Status init_delta_net_states() {
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
  absl::Status delta_net(const arch::DeltaNetBlock& b, size_t il, int n) {
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
      return output_projection(b.out_proj, GemvIn{dn_out_.p, {act_q_.p, act_ds_.p}, nullptr}, Norm{}, n);
    }
    BW24_CUDA_OK(cuda::gdn_conv(dn_y_.p, st.conv.p, dn_qkv_.p, st.taps.p, n, C, b.conv_kernel, b.n_k_heads, b.d_k, q_scale,
                                stream_),
                 "delta-net conv");
    BW24_CUDA_OK(cuda::gdn_step(a, n, stream_), "delta-net step");
    BW24_ASSIGN_OR_RETURN(const GemvIn oin, prepare(nullptr, dn_out_.p, n, static_cast<int>(Vd)));
    return output_projection(b.out_proj, oin, Norm{}, n);
  }

  // ---- Mixture-of-experts layers ----
  absl::Status check_moe(const arch::MoeBlock& e) const {
    if (e.n_used < 1 || e.n_used > cuda::kMoeMaxUsed || e.n_used > e.n_expert)
      return error(Code::kUnsupported, "{}: {} of {} experts per token (the CUDA router takes 1 to {})", g_.arch,
                   e.n_used, e.n_expert, cuda::kMoeMaxUsed);
    if (is_q8(e.gate_exps) != is_q8(e.up_exps))
      return error(Code::kUnsupported, "{}: expert gate and up tensors of types {} and {} (the CUDA runner wants "
                   "both quantized or both float)", g_.arch, type_name(w_.type_of(e.gate_exps.t)),
                   type_name(w_.type_of(e.up_exps.t)));
    for (const arch::Weight* w : {&e.gate_exps, &e.up_exps, &e.down_exps})
      if (w->t->n_dims != 3 || w->t->ne[2] != e.n_expert)
        return error(Code::kModel, "'{}' is not a stack of {} experts", w->t->name, e.n_expert);
    return absl::OkStatus();
  }

  // x += sum over the token's top-k experts of p_e down_e(act(gate_e h) * up_e h) (+ the shared
  // expert scaled by its sigmoid gate), as the CPU reference's moe(). Pair p = t * k + j is token
  // t's j-th expert; all of a step's pairs go through each routed GEMV in one launch.
  absl::Status moe(const MlpBlock& m, int n) {
    const arch::MoeBlock& e = m.moe;
    const int E = g_.n_embd, k = e.n_used;
    const void* router = w_.at(e.router.t);
    const uint32_t router_type = w_.type_of(e.router.t);
    const bool router_fused = cuda::moe_gate_supports(router, router_type, n, e.n_expert, e.router.cols());
    // One token: the router launch also does the block's input norm (cuda::MoeGateNorm, rmsnorm_q8's
    // bits), so the norm's launch and its boundary go where the cluster router runs.
    if (opt_.fused_moe_norm && n == 1 && router_fused && uses_q8_ && E % 32 == 0 && !ablate(kAblNorm, n) &&
        !ablate(kAblMoeGate, n)) {
      const GemvIn in{h_.p, {act_q_.p, act_ds_.p}, nullptr};
      const cuda::MoeGateNorm nm{f32(m.norm.w), g_.norm_eps, m.norm.one_plus, h_.p, act_q_.p, act_ds_.p};
      BW24_CUDA_OK(cuda::moe_gate(moe_.ids.p, moe_.weights.p, moe_.logits.p, moe_.gate_counter.p, router, router_type,
                                  x_.p, n, e.n_expert, e.router.cols(), k, e.norm_topk, stream_, &nm),
                   "MoE norm + router");
      return moe_experts(m, in, n);
    }
    BW24_ASSIGN_OR_RETURN(const GemvIn in, prepare(&m.norm, x_.p, n, E));
    if (in.bf) return moe_prefill(m, in.bf, n);
    // The router product and the routing in one launch where the router is F32 / F16 / BF16.
    if (ablate(kAblMoeGate, n)) {
      // left out: the routed launches read the last routes written (valid experts; zero at first)
    } else if (router_fused) {
      BW24_CUDA_OK(cuda::moe_gate(moe_.ids.p, moe_.weights.p, moe_.logits.p, moe_.gate_counter.p, router, router_type,
                                  in.x, n, e.n_expert, e.router.cols(), k, e.norm_topk, stream_),
                   "MoE router");
    } else {
      BW24_RETURN_IF_ERROR(matmul(e.router, in, n, moe_.logits.p, cuda::GemvOut::kStore));
      BW24_CUDA_OK(cuda::moe_route(moe_.ids.p, moe_.weights.p, moe_.logits.p, n, e.n_expert, k, e.norm_topk, stream_),
                   "MoE router");
    }
    return moe_experts(m, in, n);
  }

  // The GEMV pass's experts after the routing: the shared expert where the model has one, the routed
  // gate-up and down, the combine. in: the normed rows.
  absl::Status moe_experts(const MlpBlock& m, const GemvIn& in, int n) {
    const arch::MoeBlock& e = m.moe;
    const int E = g_.n_embd, k = e.n_used, pairs = n * e.n_used;
    const int64_t F = e.gate_exps.rows();
    const int act = m.act == arch::Activation::kSilu ? 0 : 1;
    // Everything that reads the normed rows (in) before the activations buffer is requantized.
    if (e.shared_gate_inp) {
      BW24_RETURN_IF_ERROR(matmul(e.shared_gate_inp, in, n, moe_.shared_gate.p, cuda::GemvOut::kStore));
      BW24_RETURN_IF_ERROR(gate_up(e.shared_gate, e.shared_up, in, n, gate_.p, up_.p, act));
    }
    const Routing by_token{pairs, k}, by_pair{pairs, 1};
    if (!ablate(kAblMoeUp, n))
      BW24_RETURN_IF_ERROR(gate_up(e.gate_exps, e.up_exps, in, n, moe_.gate.p, moe_.up.p, act, &by_token));
    if (e.shared_gate_inp) {
      const int64_t Fs = e.shared_gate.rows();
      BW24_ASSIGN_OR_RETURN(const GemvIn sin, gemv_input(nullptr, gate_.p, n, static_cast<int>(Fs)));
      BW24_RETURN_IF_ERROR(matmul(e.shared_down, sin, n, proj_.p, cuda::GemvOut::kStore));
    }
    if (ablate(kAblMoeDown, n)) return absl::OkStatus();
    BW24_ASSIGN_OR_RETURN(const GemvIn din, gemv_input(nullptr, moe_.gate.p, pairs, static_cast<int>(F)));
    const float* shared_out = e.shared_gate_inp ? proj_.p : nullptr;
    const uint32_t down_type = w_.type_of(e.down_exps.t);
    if (opt_.fused_combine && cuda::gemv_q8_combine_supports(down_type, e.down_exps.rows(), F, k)) {
      // The down projection adds its pairs into x itself: moe_combine's launch and boundary go.
      const cuda::GemvRoute route{moe_.ids.p, expert_bytes(e.down_exps), pairs, 1};
      const cuda::MoeCombine c{x_.p, moe_.weights.p, shared_out, moe_.shared_gate.p, k};
      return cuda_status(cuda::gemv_q8_combine(w_.at(e.down_exps.t), down_type, e.down_exps.rows(), F, din.q8, route,
                                               c, stream_),
                         "MoE down projection + combine");
    }
    BW24_RETURN_IF_ERROR(matmul(e.down_exps, din, n, moe_.out.p, cuda::GemvOut::kStore, nullptr, 0, &by_pair));
    return cuda_status(cuda::moe_combine(x_.p, moe_.out.p, moe_.weights.p, shared_out, moe_.shared_gate.p, n, k, E,
                                         stream_),
                       "MoE combine");
  }

  // The MoE layer of a prefill pass on the tensor cores: router GEMM, moe_route, moe_group (pairs
  // sorted by expert), the routed gate-up and down as grouped GEMMs (cuda/gemm gemm_grouped)
  // over expert groups that fit the expansion scratch, the shared expert as dense GEMMs, then
  // moe_combine as in decode. a: the normed rows in bf16 (act_bf_), overwritten by the activations
  // once every product that reads it has been queued.
  absl::Status moe_prefill(const MlpBlock& m, const cuda::bf16* a, int n) {
    const arch::MoeBlock& e = m.moe;
    const int k = e.n_used, pairs = n * k;
    const int act = m.act == arch::Activation::kSilu ? 0 : 1;
    BW24_RETURN_IF_ERROR(gemm({{&e.router, moe_.logits.p}}, a, n, cuda::GemvOut::kStore));
    BW24_CUDA_OK(cuda::moe_route(moe_.ids.p, moe_.weights.p, moe_.logits.p, n, e.n_expert, k, e.norm_topk, stream_),
                 "MoE router");
    BW24_CUDA_OK(cuda::moe_group(moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, moe_.ids.p, pairs,
                                 e.n_expert, cuda::kGemmGroupRows, stream_),
                 "MoE grouping");
    if (e.shared_gate_inp) {
      BW24_RETURN_IF_ERROR(gemm({{&e.shared_gate_inp, moe_.shared_gate.p}}, a, n, cuda::GemvOut::kStore));
      BW24_RETURN_IF_ERROR(gemm({{&e.shared_gate, gate_.p}, {&e.shared_up, up_.p}}, a, n, cuda::GemvOut::kStore));
    }
    // Q4_K / Q6_K stacks go through the int8 grouped GEMM (no bf16 expansion): its input is the
    // normed rows again, as int8 blocks (rmsnorm_q8), beside the bf16 ones the other products read.
    const bool q8_gate_up = q8_grouped({&e.gate_exps, &e.up_exps}), q8_down = q8_grouped({&e.down_exps});
    if (q8_gate_up) {
      BW24_CUDA_OK(cuda::rmsnorm_q8(nullptr, act_q_.p, act_ds_.p, x_.p, f32(m.norm.w), n, g_.n_embd, g_.norm_eps,
                                    m.norm.one_plus, stream_, opt_.moe_int8_superblock),
                   "MoE input (rmsnorm / int8)");
      BW24_RETURN_IF_ERROR(grouped_q8({{&e.gate_exps, moe_.gate.p}, {&e.up_exps, moe_.up.p}}, k, false, pairs, e.n_expert));
    } else {
      BW24_RETURN_IF_ERROR(grouped({{&e.gate_exps, moe_.gate.p}, {&e.up_exps, moe_.up.p}}, a, k, false, pairs, e.n_expert));
    }
    if (e.shared_gate_inp) {
      const int64_t Fs = e.shared_gate.rows();
      BW24_CUDA_OK(cuda::gated_act_bf16(act_bf_.p, gate_.p, up_.p, n * Fs, act, stream_), "activation");
      BW24_RETURN_IF_ERROR(gemm({{&e.shared_down, proj_.p}}, act_bf_.p, n, cuda::GemvOut::kStore));
    }
    const int64_t F = e.gate_exps.rows();
    if (q8_down) {  // the activations in f32 (in place), then as int8 blocks
      BW24_CUDA_OK(cuda::gated_act(moe_.gate.p, moe_.gate.p, moe_.up.p, pairs * F, act, stream_), "activation");
      BW24_CUDA_OK(cuda::rmsnorm_q8(nullptr, act_q_.p, act_ds_.p, moe_.gate.p, nullptr, pairs, static_cast<int>(F), 0.0f,
                                    false, stream_, opt_.moe_int8_superblock),
                   "activation (int8)");
      BW24_RETURN_IF_ERROR(grouped_q8({{&e.down_exps, moe_.out.p}}, 0, true, pairs, e.n_expert));
    } else {
      BW24_CUDA_OK(cuda::gated_act_bf16(act_bf_.p, moe_.gate.p, moe_.up.p, pairs * F, act, stream_), "activation");
      BW24_RETURN_IF_ERROR(grouped({{&e.down_exps, moe_.out.p}}, act_bf_.p, 0, true, pairs, e.n_expert));
    }
    return cuda_status(cuda::moe_combine(x_.p, moe_.out.p, moe_.weights.p, e.shared_gate_inp ? proj_.p : nullptr,
                                         moe_.shared_gate.p, n, k, g_.n_embd, stream_),
                       "MoE combine");
  }

  // Bytes of one expert of a stacked expert weight.
  static int64_t expert_bytes(const arch::Weight& w) { return int64_t(w.t->n_bytes / uint64_t(w.t->ne[2])); }

  // Whether the routed products `ws` (one launch) take the int8 grouped GEMM: every stack of one
  // type it reads as stored (Q4_K, Q6_K), experts 16-byte aligned, K a multiple of the superblock.
  bool q8_grouped(std::initializer_list<const arch::Weight*> ws) const {
    if (!opt_.moe_int8_prefill) return false;
    const uint32_t t = w_.type_of((*ws.begin())->t);
    for (const arch::Weight* w : ws)
      if (w_.type_of(w->t) != t || expert_bytes(*w) % 16 != 0 || w->cols() % 256 != 0) return false;
    return cuda::gemm_grouped_q8_supports(t);
  }

  // y_i [pairs][rows_i] = the grouped GEMM of stacked experts W_i (q8_grouped) over the pass's
  // sorted pairs with the int8 rows in act_q_ / act_ds_ (a_div and c_scatter as cuda::GemmGroups):
  // every expert in one launch, the stacks read as stored.
  absl::Status grouped_q8(std::initializer_list<GemmJob> jobs, int a_div, bool c_scatter, int pairs, int n_expert) {
    cuda::GemmSegment segs[cuda::kMaxGemmSegments];
    int count = 0;
    for (const GemmJob& j : jobs) segs[count++] = {w_.at(j.w->t), j.y, j.w->rows(), j.w->rows(), expert_bytes(*j.w)};
    const cuda::GemmGroups g{moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, 0, n_expert, a_div, c_scatter};
    return cuda_status(cuda::gemm_grouped_q8({act_q_.p, act_ds_.p, opt_.moe_int8_superblock}, segs, count,
                                             w_.type_of(jobs.begin()->w->t), g,
                                             pairs, jobs.begin()->w->cols(), cuda::GemvOut::kStore, stream_),
                       "int8 grouped gemm");
  }

  // y_i [pairs][rows_i] = the grouped GEMM of stacked experts W_i over the pass's sorted pairs
  // (moe_.sorted ...; a_div and c_scatter as cuda::GemmGroups): experts in groups whose expansion
  // fits wscratch_ (BF16 stacks are read in place), one dequant_bf16_slices per quantized stack
  // and one GEMM launch per group.
  absl::Status grouped(std::initializer_list<GemmJob> jobs, const cuda::bf16* a, int a_div, bool c_scatter, int pairs,
                       int n_expert) {
    const char* name = jobs.begin()->w->t->name.c_str();
    auto fail = [&](cudaError_t e) {
      return error(Code::kDevice, "CUDA grouped gemm of '{}': {}", name, cudaGetErrorString(e));
    };
    // Q4_K / Q6_K stacks are expanded inside the tile loads (their slices 16-byte aligned: any real
    // shape), BF16 ones read in place; the rest expand into wscratch_ a group of experts at a time.
    bool aligned = true;
    for (const GemmJob& j : jobs) aligned = aligned && expert_bytes(*j.w) % 16 == 0;
    const uint32_t fused = aligned ? fused_type(jobs) : 0;
    auto expands = [&](const arch::Weight& w) { return !fused && !is_bf16(w); };
    int64_t per_expert = 0;
    for (const GemmJob& j : jobs) per_expert += expands(*j.w) ? expanded_elems(*j.w) : 0;
    const int group = per_expert == 0 ? n_expert : static_cast<int>(std::min<int64_t>(n_expert, scratch_elems_ / per_expert));
    if (group < 1) return error(Code::kInternal, "expansion scratch smaller than one expert of '{}'", name);
    const int buf = free_scratch();
    for (int e0 = 0; e0 < n_expert; e0 += group) {
      const int e1 = std::min(n_expert, e0 + group);
      cuda::GemmSegment segs[cuda::kMaxGemmSegments];
      int count = 0;
      int64_t used = 0;
      for (const GemmJob& j : jobs) {
        const int64_t rows = j.w->rows(), cols = j.w->cols(), slice = expert_bytes(*j.w);
        const uint8_t* base = static_cast<const uint8_t*>(w_.at(j.w->t)) + e0 * slice;
        if (!expands(*j.w)) {  // the stack as it lies: expert e at base + (e - e0) slice
          segs[count++] = {base, j.y, rows, rows, slice};
          continue;
        }
        const cudaError_t e = cuda::dequant_bf16_slices(base, w_.type_of(j.w->t), rows, cols, slice, e1 - e0,
                                                        scratch(buf) + used, stream_);
        if (e != cudaSuccess) return fail(e);
        segs[count++] = {scratch(buf) + used, j.y, rows, rows, rows * cols * 2};
        used += (e1 - e0) * rows * cols;
      }
      const cuda::GemmGroups g{moe_.sorted.p, moe_.offsets.p, moe_.tile_start.p, moe_.tiles.p, e0, e1, a_div, c_scatter};
      const cudaError_t e = cuda::gemm_grouped(a, segs, count, fused ? fused : static_cast<uint32_t>(GgmlType::BF16), g,
                                               pairs, jobs.begin()->w->cols(), cuda::GemvOut::kStore, stream_);
      if (e != cudaSuccess) return fail(e);
    }
    return used_scratch(buf);
  }

  // y = act(gate in) * up in for a gated MLP's first half (GEMV; routed over stacked experts with
  // `routing`): one fused launch when both are int8-path weights of one type; up_buf is scratch for
  // the unfused case.
  absl::Status gate_up(const arch::Weight& gate, const arch::Weight& up, const GemvIn& in, int n, float* y,
                       float* up_buf, int act, const Routing* routing = nullptr) {
    if (is_q8(gate) && w_.type_of(gate.t) == w_.type_of(up.t))
      return matmul(gate, in, n, y, cuda::GemvOut::kGateUp, &up, act, routing);
    BW24_RETURN_IF_ERROR(matmul(gate, in, n, y, cuda::GemvOut::kStore, nullptr, 0, routing));
    BW24_RETURN_IF_ERROR(matmul(up, in, n, up_buf, cuda::GemvOut::kStore, nullptr, 0, routing));
    const int64_t rows_out = routing ? routing->pairs : n;
    return cuda_status(cuda::gated_act(y, y, up_buf, rows_out * gate.rows(), act, stream_), "activation");
  }

  absl::Status mlp(const MlpBlock& m, int n) {
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
    if (!ablate(kAblGateUp, n)) BW24_RETURN_IF_ERROR(gate_up(m.gate, m.up, in, n, gate_.p, up_.p, act));
    BW24_ASSIGN_OR_RETURN(const GemvIn din, prepare(nullptr, gate_.p, n, static_cast<int>(F)));
    if (ablate(kAblDown, n)) return absl::OkStatus();
    return output_projection(m.down, din, m.post_norm, n);
  }

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
  DeviceArray<cuda::bf16> act_bf_, wscratch_;  // GEMM input rows; quantized weights expanded
  DeviceArray<cuda::bf16> wscratch2_;          // the second buffer of the expansion ahead
  Ahead ahead_;
  std::vector<std::unique_ptr<DeviceArray<uint8_t>>> kc_, vc_;  // [n_ctx][n_head_kv * head_dim] of kv_types()
  std::vector<std::unique_ptr<DeviceArray<double>>> inv_freq_;  // per layer, [rope_dims / 2]
  DeviceArray<cuda::RopeTableLayer> rope_layers_;               // per layer: inv_freq_, theta, rope_dims
  DeviceArray<float2> rope_angles_;                             // a one-token step's (cos, sin), [layer][rope_stride_]
  int64_t rope_stride_ = 0;                                     // the largest rope_dims / 2
  // Whether a pass of n tokens takes its angles from rope_table (one-token steps whose flash decode
  // does the RoPE: attention() sets QkRopeArgs::angles under the same test).
  bool rope_table_step(int n) const {
    return n == 1 && opt_.fused_rope && rope_table_on() && !ablate(kAblRope, n) && !ablate(kAblAttn, n);
  }
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

}  // namespace

absl::StatusOr<std::unique_ptr<Runner>> make_cuda_runner(const ModelGraph& graph, const DeviceWeights& w,
                                                         const RunnerOptions& opt) {
  if (graph.layers.empty()) return error(Code::kModel, "model has no layers");
  auto r = std::make_unique<CudaRunner>(graph, w, opt);
  BW24_RETURN_IF_ERROR(r->init());
  return std::unique_ptr<Runner>(std::move(r));
}

}  // namespace bw24::engine
