// Hugging Face model directory -> TensorDirectory: config.json mapped to GGUF metadata keys,
// tensor names mapped to llama.cpp's, shapes reversed to ne order. The bytes stay where they are
// (memory-mapped); transforms the math needs (e.g. HF llama's half-split RoPE) are recorded by
// Origin::kHuggingFace and applied by the arch files, not by rewriting weights.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

absl::StatusOr<std::unique_ptr<TensorDirectory>> load_hf_directory(const std::string& dir);

// Maps one HF tensor name to its GGUF name ("" when the name is not a known weight).
std::string hf_to_gguf_name(const std::string& hf_name, const std::string& arch = "");

}  // namespace bw24::loaders
