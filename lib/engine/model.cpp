#include "lib/engine/model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "lib/arch/registry.h"
#include "lib/core/log.h"
#include "lib/core/options.h"
#include "lib/core/dtype.h"
#include "lib/core/status.h"
#include "loaders/gguf/gguf.h"
#include "loaders/open.h"

#ifdef BW24_WITH_CUDA
#include "cuda/common/device.h"
#include "lib/engine/cuda_runner.h"
#endif

namespace bw24::engine {

int cuda_device_count() {
#ifdef BW24_WITH_CUDA
  return bw24::cuda::device_count();
#else
  return 0;
#endif
}

const char* cuda_build_info() {
#ifdef BW24_WITH_CUDA
  return "CUDA " BW24_CUDA_VERSION ", sm " BW24_CUDA_ARCH_LIST;
#else
  return "no CUDA";
#endif
}

namespace {

constexpr std::string_view kPrefault = "prefault";
constexpr std::string_view kCudaGraph = "cuda_graph";
constexpr std::string_view kKvRotate = "kv_rotate";

// A 0/1 option; absent = dflt.
absl::StatusOr<bool> bool_option(const OptionMap& options, std::string_view key, bool dflt) {
  auto it = options.find(std::string(key));
  if (it == options.end()) return dflt;
  if (it->second != "0" && it->second != "1") return error(Code::kInvalidArgument, "option {}={} must be 0 or 1", key, it->second);
  return it->second == "1";
}

absl::Status check_device(int32_t device) {
  if (device < -1) return error(Code::kInvalidArgument, "device {} is invalid (-1 = CPU, >= 0 = CUDA)", device);
  if (device == -1) return absl::OkStatus();
#ifndef BW24_WITH_CUDA
  return error(Code::kDevice, "CUDA device {} requested but this libbw24 was built without CUDA", device);
#else
  int n = cuda_device_count();
  if (device >= n)
    return error(Code::kDevice, "CUDA device {} requested but {} usable device(s) found", device, n);
  return absl::OkStatus();
#endif
}

// What the weights are stored as, for reports: the file's own word where it has one (GGUF
// general.file_type: the mix llama-quantize wrote, "Q4_K_M"), else the types of the matrices (2-D
// and up) by the bytes they hold, largest first, leaving out those under a tenth of the bytes:
// "BF16", "Q4_K+Q6_K".
std::string describe_quant(const loaders::TensorDirectory& dir) {
  if (const loaders::MetaValue* ft = dir.meta("general.file_type"))
    if (const std::optional<int64_t> id = ft->as_int())
      if (const std::string_view name = loaders::file_type_name(*id); !name.empty()) return std::string(name);
  std::map<uint32_t, uint64_t> by_type;
  uint64_t total = 0;
  for (const auto& t : dir.tensors())
    if (t.n_dims >= 2) {
      by_type[t.type] += t.n_bytes;
      total += t.n_bytes;
    }
  std::vector<std::pair<uint64_t, uint32_t>> order;
  for (const auto& [type, bytes] : by_type) order.emplace_back(bytes, type);
  std::sort(order.begin(), order.end(), std::greater<>());
  std::string out;
  for (const auto& [bytes, type] : order)
    if (out.empty() || bytes * 10 >= total) {
      if (!out.empty()) out += '+';
      out += type_name(type);
    }
  return out;
}

}  // namespace

int32_t Model::n_vocab() const {
  if (!graph_.layers.empty() || !tokenizer_) return graph_.n_vocab;
  return tokenizer_->vocab().n_tokens();
}

const std::vector<int32_t>& Model::eog_tokens() const {
  return tokenizer_ ? tokenizer_->vocab().eog : graph_.eog_tokens;
}

bool Model::is_eog(int32_t token) const {
  const std::vector<int32_t>& eog = eog_tokens();
  return std::find(eog.begin(), eog.end(), token) != eog.end();
}

absl::StatusOr<std::shared_ptr<const Model>> Model::open(const std::string& path,
                                                         const ModelOptions& opt) {
  BW24_ASSIGN_OR_RETURN(auto dir, loaders::open_model_source(path));
  const loaders::MetaValue* name = dir->meta("general.name");
  std::string n = name && name->type == loaders::MetaType::STRING ? name->s
                                                                  : std::filesystem::path(path).filename().string();
  return from_directory(std::move(dir), n, opt);
}

absl::StatusOr<std::shared_ptr<const Model>> Model::from_directory(std::unique_ptr<loaders::TensorDirectory> dir,
                                                                   const std::string& name,
                                                                   const ModelOptions& opt) {
  BW24_ASSIGN_OR_RETURN(OptionMap options, parse_options(opt.options, {kPrefault, kCudaGraph, kKvRotate}));
  BW24_ASSIGN_OR_RETURN(bool prefault, bool_option(options, kPrefault, true));
  BW24_ASSIGN_OR_RETURN(bool cuda_graph, bool_option(options, kCudaGraph, true));
  BW24_ASSIGN_OR_RETURN(bool kv_rotate, bool_option(options, kKvRotate, false));
  if (opt.n_threads < 0) return error(Code::kInvalidArgument, "n_threads {} is negative", opt.n_threads);
  BW24_RETURN_IF_ERROR(check_device(opt.device));
  auto report = [&](float f) -> absl::Status {
    if (opt.progress && !opt.progress(f)) return error(Code::kAborted, "load aborted by the progress callback");
    return absl::OkStatus();
  };
  BW24_RETURN_IF_ERROR(report(0.0f));

  std::shared_ptr<Model> m(new Model());
  m->opt_ = opt;
  m->cuda_graph_ = cuda_graph;
  m->kv_rotate_ = kv_rotate;
  m->dir_ = std::move(dir);
  m->name_ = name;
  m->quant_ = describe_quant(*m->dir_);
  auto tok = tokenizer::Tokenizer::create(*m->dir_);
  if (tok.ok()) {
    m->tokenizer_ = std::move(tok).value();
  } else if (code_of(tok.status()) != Code::kNotFound) {
    return with_context(tok.status(), "tokenizer");
  }
  if (opt.vocab_only) {
    if (!m->tokenizer_) return error(Code::kUnsupported, "vocab-only open of '{}', which has no tokenizer", name);
    return std::shared_ptr<const Model>(std::move(m));
  }
  BW24_ASSIGN_OR_RETURN(m->graph_, arch::build_graph(*m->dir_));
  if (m->tokenizer_ && m->tokenizer_->vocab().n_tokens() > m->graph_.n_vocab)
    return error(Code::kModel, "the tokenizer has {} tokens but the embedding only {} rows",
                 m->tokenizer_->vocab().n_tokens(), m->graph_.n_vocab);
  for (const auto& t : m->dir_->tensors()) {
    m->n_params_ += static_cast<uint64_t>(t.n_elements());
    m->n_bytes_ += t.n_bytes;
  }
  BW24_RETURN_IF_ERROR(report(0.05f));
#ifdef BW24_WITH_CUDA
  if (opt.device >= 0) {
    // An untied embedding table goes up only where the decode step can gather from it on the
    // device (run-ahead decoding); else it stays in host memory for embed_tokens.
    const loaders::TensorInfo* untied = m->graph_.tied_embeddings ? nullptr : m->graph_.tok_embd.t;
    BW24_ASSIGN_OR_RETURN(m->device_weights_,
                          DeviceWeights::upload(*m->dir_, untied, opt.device, opt.vram_budget_bytes,
                                                [&](float f) { return report(0.05f + 0.95f * f); }));
    prefault = false;  // the upload read every byte the device needs; embedding rows are read on use
  }
#endif
  // Touch every page of the weights now (one byte per 4 KiB page), so the first token is not the
  // one that reads the file and the progress callback reports real reading.
  if (prefault) {
    uint64_t done = 0;
    volatile uint8_t sink = 0;
    for (const auto& t : m->dir_->tensors()) {
      for (uint64_t off = 0; off < t.n_bytes; off += 4096) sink = sink + t.data[off];
      done += t.n_bytes;
      if (m->n_bytes_) BW24_RETURN_IF_ERROR(report(0.05f + 0.95f * static_cast<float>(done) / m->n_bytes_));
    }
  }
  BW24_RETURN_IF_ERROR(report(1.0f));
  log(LogLevel::kInfo, "loaded {} ({}, {} layers, {} params, {:.1f} MiB)", m->name_, m->graph_.arch,
      m->graph_.layers.size(), m->n_params_, m->n_bytes_ / 1048576.0);
  return std::shared_ptr<const Model>(std::move(m));
}

}  // namespace bw24::engine
