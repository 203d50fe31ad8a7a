// DeviceWeights (cuda_runner.h): a model's tensors uploaded once, in the layouts the kernels read.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda/common/q6k_tiles.cuh"
#include "cuda/ops/embed.cuh"
#include "lib/engine/cuda_check.h"
#include "lib/engine/cuda_runner.h"
#include "lib/quant/repack.h"
#include "lib/quant/traits.h"

namespace bw24::engine {

absl::StatusOr<std::unique_ptr<DeviceWeights>> DeviceWeights::upload(
    const loaders::TensorDirectory& dir, const loaders::TensorInfo* embeddings, int device, uint64_t budget,
    const std::function<absl::Status(float)>& progress) {
  BW24_CUDA_OK(cudaSetDevice(device), "set device");
  std::unique_ptr<DeviceWeights> w(new DeviceWeights());
  w->device_ = device;
  uint64_t total = 0;
  for (const auto& t : dir.tensors())
    if (&t != embeddings) total += t.n_dims == 1 ? static_cast<uint64_t>(t.n_elements()) * 4 : t.n_bytes;
  size_t free_b = 0, total_b = 0;
  BW24_CUDA_OK(cudaMemGetInfo(&free_b, &total_b), "memory info");
  const uint64_t limit = budget ? std::min<uint64_t>(budget, free_b) : free_b;
  // An untied table goes up where the step's gather takes it and it fits (334 MiB for Qwen3-8B's
  // Q4_K table); else its rows are gathered on the host, and decode steps are not run ahead.
  const loaders::TensorInfo* host_only = nullptr;
  if (embeddings) {
    if (embeddings->n_dims == 2 && cuda::embed_supports(embeddings->type, embeddings->ne[0]) &&
        total + embeddings->n_bytes <= limit)
      total += embeddings->n_bytes;
    else
      host_only = embeddings;
  }
  if (total > limit)
    return error(Code::kOutOfMemory, "the weights need {:.1f} MiB on CUDA device {}, {:.1f} MiB available{}",
                 total / 1048576.0, device, limit / 1048576.0, budget ? " (vram_budget_bytes)" : "");
  uint64_t done = 0;
  std::vector<uint8_t> staging;  // a repacked tensor on its way up
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
    } else if (const quant::PlaneLayout* planes = quant::plane_layout(t.type)) {
      // Kernel-native layout for the int8 GEMV (lib/quant/repack.h). Stacked experts (3-D) one
      // expert at a time: expert e stays the slice at e * bytes / n_expert (cuda/gemv GemvRoute).
      staging.resize(t.n_bytes);
      const uint64_t slices = t.n_dims == 3 ? static_cast<uint64_t>(t.ne[2]) : 1, slice = t.n_bytes / slices;
      const auto slice_blocks = static_cast<int64_t>(slice / planes->block_bytes);
      const int64_t tile = cuda::device_plane_tile(t.type, t.ne[0], slice_blocks);  // Q6_K: a tile a row piece
      for (uint64_t e = 0; e < slices; ++e)
        quant::to_planes(*planes, t.data + e * slice, slice_blocks, staging.data() + e * slice, tile);
      src = staging.data();
    }
    void* p = nullptr;
    // 16 bytes of slack: the fused GEMM's Q6_K tile loads read the aligned 16 bytes around the
    // last block's d (cuda/gemm/gemm.cu LoadQ6K).
    BW24_CUDA_OK(cudaMalloc(&p, bytes + 16), "weight allocation");
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

}  // namespace bw24::engine
