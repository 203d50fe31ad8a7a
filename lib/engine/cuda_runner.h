// The CUDA backend's host side: weights uploaded once per model (DeviceWeights) and a Runner per
// session that walks the ModelGraph with the kernels of cuda/ (version 1: one kernel per op, up to
// 8 tokens per step through the decode GEMV; the fused, graph-captured decode comes next).
// Compiled only with BW24_WITH_CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "lib/engine/runner.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::engine {

class DeviceWeights {
 public:
  // Uploads every tensor (1-D tensors, i.e. norms and biases, converted to f32) but `embeddings`
  // (an untied embedding table, or null) where cuda::embed_token does not take its type or it does
  // not fit: at() is then null for it, and the runner gathers its rows on the host.
  // progress(f) may abort by returning an error. budget: 0 = the device's free memory.
  static absl::StatusOr<std::unique_ptr<DeviceWeights>> upload(const loaders::TensorDirectory& dir,
                                                               const loaders::TensorInfo* embeddings, int device,
                                                               uint64_t budget,
                                                               const std::function<absl::Status(float)>& progress);
  ~DeviceWeights();
  const void* at(const loaders::TensorInfo* t) const;
  uint32_t type_of(const loaders::TensorInfo* t) const;  // the type as stored on the device
  int device() const { return device_; }
  uint64_t bytes() const { return bytes_; }

 private:
  DeviceWeights() = default;
  int device_ = 0;
  uint64_t bytes_ = 0;
  std::unordered_map<const loaders::TensorInfo*, std::pair<void*, uint32_t>> tensors_;
};

absl::StatusOr<std::unique_ptr<Runner>> make_cuda_runner(const arch::ModelGraph& graph, const DeviceWeights& w,
                                                         const RunnerOptions& opt);

}  // namespace bw24::engine
