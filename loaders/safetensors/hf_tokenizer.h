// Hugging Face tokenizer.json (+ tokenizer_config.json) -> the same tokenizer.* metadata keys a
// GGUF carries, so one tokenizer implementation serves both. Byte-level BPE only for now.
// Keys beyond llama.cpp's: tokenizer.bw24.pre_patterns (the pre-tokenizer regexes in order),
// tokenizer.bw24.normalizer ("nfc"), tokenizer.bw24.ignore_merges.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

// dir holds tokenizer.json (required) and tokenizer_config.json (optional).
absl::Status load_hf_tokenizer(const std::string& dir, TensorDirectory* out);

}  // namespace bw24::loaders
