#include "lib/engine/cuda_runner.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda/gemv/gemv.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/ops/ops.cuh"
#include "lib/core/status.h"
#include "lib/quant/traits.h"

namespace bw24::engine {
namespace {

absl::Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return absl::OkStatus();
  if (e == cudaErrorMemoryAllocation) return error(Code::kOutOfMemory, "CUDA {}: out of device memory", what);
  return error(Code::kDevice, "CUDA {}: {}", what, cudaGetErrorString(e));
}

#define BW24_CUDA_OK(expr, what) BW24_RETURN_IF_ERROR(cuda_status((expr), what))

// A device allocation of n floats, freed with the owner.
struct DeviceArray {
  float* p = nullptr;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p); }
  absl::Status alloc(size_t n, const char* what) { return cuda_status(cudaMalloc(&p, std::max<size_t>(n, 1) * 4), what); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Weights.
// ---------------------------------------------------------------------------------------------
absl::StatusOr<std::unique_ptr<DeviceWeights>> DeviceWeights::upload(
    const loaders::TensorDirectory& dir, const loaders::TensorInfo* host_only, int device, uint64_t budget,
    const std::function<absl::Status(float)>& progress) {
  BW24_CUDA_OK(cudaSetDevice(device), "set device");
  std::unique_ptr<DeviceWeights> w(new DeviceWeights());
  w->device_ = device;
  uint64_t total = 0;
  for (const auto& t : dir.tensors())
    if (&t != host_only) total += t.n_dims == 1 ? static_cast<uint64_t>(t.n_elements()) * 4 : t.n_bytes;
  size_t free_b = 0, total_b = 0;
  BW24_CUDA_OK(cudaMemGetInfo(&free_b, &total_b), "memory info");
  const uint64_t limit = budget ? std::min<uint64_t>(budget, free_b) : free_b;
  if (total > limit)
    return error(Code::kOutOfMemory, "the weights need {:.1f} MiB on CUDA device {}, {:.1f} MiB available{}",
                 total / 1048576.0, device, limit / 1048576.0, budget ? " (vram_budget_bytes)" : "");
  uint64_t done = 0;
  for (const auto& t : dir.tensors()) {
    if (&t == host_only) continue;
    const quant::QuantTraits* q = quant::traits(t.type);
    std::vector<float> f32;
    const void* src = t.data;
    uint64_t bytes = t.n_bytes;
    uint32_t type = t.type;
    if (t.n_dims == 1 && q && t.type != 0) {  // norms and biases as f32
      f32.resize(static_cast<size_t>(t.n_elements()));
      q->dequant(t.data, f32.data(), t.n_elements());
      src = f32.data();
      bytes = f32.size() * 4;
      type = 0;
    }
    void* p = nullptr;
    BW24_CUDA_OK(cudaMalloc(&p, std::max<uint64_t>(bytes, 1)), "weight allocation");
    w->tensors_[&t] = {p, type};
    BW24_CUDA_OK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice), "weight upload");
    w->bytes_ += bytes;
    done += bytes;
    if (progress && total) BW24_RETURN_IF_ERROR(progress(static_cast<float>(done) / static_cast<float>(total)));
  }
  return w;
}

DeviceWeights::~DeviceWeights() {
  cudaSetDevice(device_);
  for (auto& [t, p] : tensors_) cudaFree(p.first);
}

const void* DeviceWeights::at(const loaders::TensorInfo* t) const {
  auto it = tensors_.find(t);
  return it == tensors_.end() ? nullptr : it->second.first;
}

uint32_t DeviceWeights::type_of(const loaders::TensorInfo* t) const {
  auto it = tensors_.find(t);
  return it == tensors_.end() ? t->type : it->second.second;
}

// ---------------------------------------------------------------------------------------------
// Runner.
// ---------------------------------------------------------------------------------------------
namespace {

using arch::AttentionBlock;
using arch::MlpBlock;
using arch::ModelGraph;
using arch::Norm;

constexpr int kStep = cuda::kGemvMaxTokens;  // tokens per pass through the layers

class CudaRunner final : public Runner {
 public:
  CudaRunner(const ModelGraph& g, const DeviceWeights& w, const RunnerOptions& opt) : g_(g), w_(w), opt_(opt) {}
  ~CudaRunner() override {
    cudaSetDevice(w_.device());
    if (stream_) cudaStreamDestroy(stream_);
  }

  absl::Status init() {
    BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
    BW24_CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
    int64_t qw = 0, kw = 0, ff = 0;
    for (const auto& L : g_.layers) {
      qw = std::max<int64_t>(qw, int64_t{L.attn.n_head} * L.attn.head_dim);
      kw = std::max<int64_t>(kw, int64_t{L.attn.n_head_kv} * L.attn.head_dim);
      ff = std::max<int64_t>(ff, L.mlp.gate.rows());
    }
    kv_width_ = kw;
    const size_t E = static_cast<size_t>(g_.n_embd);
    emb_.resize(kStep * E);
    BW24_RETURN_IF_ERROR(x_.alloc(kStep * E, "activations"));
    BW24_RETURN_IF_ERROR(h_.alloc(kStep * E, "activations"));
    BW24_RETURN_IF_ERROR(proj_.alloc(kStep * E, "activations"));
    BW24_RETURN_IF_ERROR(q_.alloc(kStep * qw, "activations"));
    BW24_RETURN_IF_ERROR(k_.alloc(kStep * kw, "activations"));
    BW24_RETURN_IF_ERROR(v_.alloc(kStep * kw, "activations"));
    BW24_RETURN_IF_ERROR(o_.alloc(kStep * qw, "activations"));
    BW24_RETURN_IF_ERROR(gate_.alloc(kStep * ff, "activations"));
    BW24_RETURN_IF_ERROR(up_.alloc(kStep * ff, "activations"));
    BW24_RETURN_IF_ERROR(logits_.alloc(kStep * static_cast<size_t>(g_.n_vocab), "logits"));
    int max_heads = 0;
    for (const auto& L : g_.layers) max_heads = std::max(max_heads, L.attn.n_head);
    BW24_RETURN_IF_ERROR(scores_.alloc(size_t(kStep) * max_heads * opt_.n_ctx, "attention scratch"));
    kc_.resize(g_.layers.size());
    vc_.resize(g_.layers.size());
    for (size_t l = 0; l < g_.layers.size(); ++l) {
      kc_[l] = std::make_unique<DeviceArray>();
      vc_[l] = std::make_unique<DeviceArray>();
      BW24_RETURN_IF_ERROR(kc_[l]->alloc(size_t(opt_.n_ctx) * kw, "KV cache"));
      BW24_RETURN_IF_ERROR(vc_[l]->alloc(size_t(opt_.n_ctx) * kw, "KV cache"));
    }
    return absl::OkStatus();
  }

  uint64_t state_bytes() const override { return uint64_t(g_.layers.size()) * opt_.n_ctx * kv_width_ * 8; }

  absl::Status forward(const ForwardRequest& req) override {
    BW24_CUDA_OK(cudaSetDevice(w_.device()), "set device");
    const int64_t E = g_.n_embd, V = g_.n_vocab;
    for (int32_t done = 0; done < req.n;) {
      const int n = std::min<int32_t>(kStep, req.n - done);
      const int64_t pos = req.pos + done;
      // Embeddings on the host (one row per token), scaled, then uploaded. The staging buffer
      // lives as long as the runner: the decode hot path allocates nothing.
      embed_tokens(g_, req.tokens + done, n, emb_.data());
      BW24_CUDA_OK(cudaMemcpyAsync(x_.p, emb_.data(), size_t(n * E) * 4, cudaMemcpyHostToDevice, stream_), "upload");
      for (size_t il = 0; il < g_.layers.size(); ++il) {
        if (req.cancel && req.cancel->load(std::memory_order_relaxed))
          return error(Code::kCancelled, "cancelled at layer {}", il);
        const arch::Layer& L = g_.layers[il];
        BW24_RETURN_IF_ERROR(attention(L.attn, static_cast<int>(il), n, pos));
        BW24_RETURN_IF_ERROR(mlp(L.mlp, n));
      }
      // Logits: every row with all_logits, else only the very last token.
      const bool last = done + n == req.n;
      if (req.all_logits || last) {
        const int first = req.all_logits ? 0 : n - 1, rows = n - first;
        BW24_RETURN_IF_ERROR(norm(g_.output_norm, h_.p, x_.p + first * E, rows, static_cast<int>(E)));
        BW24_RETURN_IF_ERROR(gemv(g_.output, h_.p, rows, logits_.p));
        float* dst = req.logits + (req.all_logits ? size_t(done) * V : 0);
        BW24_CUDA_OK(cudaMemcpyAsync(dst, logits_.p, size_t(rows) * V * 4, cudaMemcpyDeviceToHost, stream_), "logits");
      }
      done += n;
    }
    BW24_CUDA_OK(cudaStreamSynchronize(stream_), "forward");
    return absl::OkStatus();
  }

 private:
  const float* f32(const arch::Weight& w) const { return static_cast<const float*>(w_.at(w.t)); }

  absl::Status norm(const Norm& nm, float* y, const float* x, int rows, int width) {
    return cuda_status(cuda::rmsnorm(y, x, f32(nm.w), rows, width, g_.norm_eps, nm.one_plus, stream_), "rmsnorm");
  }
  absl::Status gemv(const arch::Weight& w, const float* x, int n, float* y) {
    const uint32_t type = w_.type_of(w.t);
    if (!cuda::gemv_supports(type))
      return error(Code::kUnsupported, "tensor '{}' has type {}, which the CUDA GEMV does not handle yet", w.t->name,
                   type_name(type));
    return cuda_status(cuda::gemv(w_.at(w.t), type, w.rows(), w.cols(), x, n, y, stream_), "gemv");
  }

  absl::Status attention(const AttentionBlock& a, int layer, int n, int64_t pos) {
    const int E = g_.n_embd, D = a.head_dim, kw = a.n_head_kv * D;
    BW24_RETURN_IF_ERROR(norm(a.norm, h_.p, x_.p, n, E));
    BW24_RETURN_IF_ERROR(gemv(a.wq, h_.p, n, q_.p));
    BW24_RETURN_IF_ERROR(gemv(a.wk, h_.p, n, k_.p));
    BW24_RETURN_IF_ERROR(gemv(a.wv, h_.p, n, v_.p));
    if (a.q_norm.w) BW24_RETURN_IF_ERROR(norm(a.q_norm, q_.p, q_.p, n * a.n_head, D));
    if (a.k_norm.w) BW24_RETURN_IF_ERROR(norm(a.k_norm, k_.p, k_.p, n * a.n_head_kv, D));
    const bool neox = a.rope_style == arch::RopeStyle::kNeox;
    BW24_CUDA_OK(cuda::rope(q_.p, n, a.n_head, D, a.rope_dims, pos, a.rope_theta, neox, stream_), "rope");
    BW24_CUDA_OK(cuda::rope(k_.p, n, a.n_head_kv, D, a.rope_dims, pos, a.rope_theta, neox, stream_), "rope");
    BW24_CUDA_OK(cuda::kv_store(kc_[layer]->p, vc_[layer]->p, k_.p, v_.p, n, kw, pos, stream_), "kv store");
    BW24_CUDA_OK(cuda::attention(o_.p, q_.p, kc_[layer]->p, vc_[layer]->p, scores_.p, n, a.n_head, a.n_head_kv, D, pos,
                                 a.sliding_window, a.scale, opt_.n_ctx, stream_),
                 "attention");
    BW24_RETURN_IF_ERROR(gemv(a.wo, o_.p, n, proj_.p));
    if (a.post_norm.w) BW24_RETURN_IF_ERROR(norm(a.post_norm, proj_.p, proj_.p, n, E));
    return cuda_status(cuda::add_inplace(x_.p, proj_.p, int64_t{n} * E, stream_), "residual");
  }

  absl::Status mlp(const MlpBlock& m, int n) {
    const int E = g_.n_embd;
    const int64_t F = m.gate.rows();
    BW24_RETURN_IF_ERROR(norm(m.norm, h_.p, x_.p, n, E));
    BW24_RETURN_IF_ERROR(gemv(m.gate, h_.p, n, gate_.p));
    BW24_RETURN_IF_ERROR(gemv(m.up, h_.p, n, up_.p));
    const int act = m.act == arch::Activation::kSilu ? 0 : 1;
    BW24_CUDA_OK(cuda::gated_act(gate_.p, gate_.p, up_.p, n * F, act, stream_), "activation");
    BW24_RETURN_IF_ERROR(gemv(m.down, gate_.p, n, proj_.p));
    if (m.post_norm.w) BW24_RETURN_IF_ERROR(norm(m.post_norm, proj_.p, proj_.p, n, E));
    return cuda_status(cuda::add_inplace(x_.p, proj_.p, int64_t{n} * E, stream_), "residual");
  }

  const ModelGraph& g_;
  const DeviceWeights& w_;
  RunnerOptions opt_;
  cudaStream_t stream_ = nullptr;
  int64_t kv_width_ = 0;
  std::vector<float> emb_;  // host staging for the embedding rows, [kStep][n_embd]
  DeviceArray x_, h_, proj_, q_, k_, v_, o_, gate_, up_, logits_, scores_;
  std::vector<std::unique_ptr<DeviceArray>> kc_, vc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Runner>> make_cuda_runner(const ModelGraph& graph, const DeviceWeights& w,
                                                         const RunnerOptions& opt) {
  if (graph.layers.empty()) return error(Code::kModel, "model has no layers");
  if (opt.k_type != kv::KvType::kF32 || opt.v_type != kv::KvType::kF32)
    return error(Code::kUnsupported, "the CUDA runner keeps an f32 KV cache for now (BW24_KV_F32 or BW24_KV_AUTO)");
  auto r = std::make_unique<CudaRunner>(graph, w, opt);
  BW24_RETURN_IF_ERROR(r->init());
  return std::unique_ptr<Runner>(std::move(r));
}

}  // namespace bw24::engine
