// Model: the immutable, shareable result of opening a file: tensor directory (mapped weights),
// the arch graph built over it, and where it runs. Sessions hold a shared_ptr to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/arch/graph.h"
#include "lib/tokenizer/tokenizer.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::engine {

class DeviceWeights;  // lib/engine/cuda_runner.h (CUDA builds only)

struct ModelOptions {
  int32_t device = -1;   // -1 CPU reference; >= 0 CUDA ordinal
  int32_t n_threads = 0;
  uint64_t vram_budget_bytes = 0;
  std::function<bool(float)> progress;  // return false to abort
  std::string options;   // "key=value;..." (see docs/abi.md)
  bool vocab_only = false;  // metadata + tokenizer; no graph, no sessions
};

class Model {
 public:
  static absl::StatusOr<std::shared_ptr<const Model>> open(const std::string& path,
                                                           const ModelOptions& opt);
  // A model over a directory built in memory (bw24-bench's synthetic shapes). `name` is reported.
  static absl::StatusOr<std::shared_ptr<const Model>> from_directory(std::unique_ptr<loaders::TensorDirectory> dir,
                                                                     const std::string& name,
                                                                     const ModelOptions& opt);

  const loaders::TensorDirectory& dir() const { return *dir_; }
  const arch::ModelGraph& graph() const { return graph_; }
  // nullptr when the file carries no tokenizer.
  const tokenizer::Tokenizer* tokenizer() const { return tokenizer_.get(); }
  int32_t n_vocab() const;
  const ModelOptions& options() const { return opt_; }
  const std::string& name() const { return name_; }
  // What the weights are stored as: the GGUF's general.file_type name ("Q4_K_M"), else the matrices'
  // types by bytes ("BF16", "Q4_K+Q6_K"); "" without weights (a vocabulary-only file).
  const std::string& quant() const { return quant_; }
  uint64_t n_params() const { return n_params_; }
  uint64_t n_bytes() const { return n_bytes_; }
  bool is_eog(int32_t token) const;
  // The end-of-generation ids: the tokenizer's, else those the graph read from the file.
  const std::vector<int32_t>& eog_tokens() const;
  // The weights on the CUDA device when device >= 0 (nullptr on the CPU).
  const DeviceWeights* device_weights() const { return device_weights_.get(); }
  bool cuda_graph() const { return cuda_graph_; }  // option cuda_graph: decode steps as graph replays
  bool kv_rotate() const { return kv_rotate_; }    // option kv_rotate: sessions rotate q8_0 / q4_0 caches

 private:
  Model() = default;
  std::unique_ptr<loaders::TensorDirectory> dir_;
  arch::ModelGraph graph_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::shared_ptr<DeviceWeights> device_weights_;
  ModelOptions opt_;
  std::string name_, quant_;
  uint64_t n_params_ = 0, n_bytes_ = 0;
  bool cuda_graph_ = true;
  bool kv_rotate_ = false;
};

// Device queries that work whether or not the CUDA backend is compiled in.
int cuda_device_count();  // 0 without CUDA or without a usable device
const char* cuda_build_info();

}  // namespace bw24::engine
