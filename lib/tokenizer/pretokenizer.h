// Byte-level BPE pre-tokenization: a named sequence of regexes (PCRE2, UTF + Unicode properties,
// JIT) splits text into pieces. Each regex splits every current piece independently; matches and
// the gaps between them both become pieces (Hugging Face's Split with "isolated" behaviour).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24::tokenizer {

class PreTokenizer {
 public:
  // name: tokenizer.ggml.pre ("gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-coder", "smollm",
  // ...). Unknown names give Code::kUnsupported listing the known ones.
  static absl::StatusOr<std::unique_ptr<PreTokenizer>> create(const std::string& name);
  // Same, from explicit patterns (tests, tokenizer.json patterns).
  static absl::StatusOr<std::unique_ptr<PreTokenizer>> from_patterns(const std::vector<std::string>& patterns);
  ~PreTokenizer();

  // text must be valid UTF-8. Pieces are substrings of text, in order, covering it exactly.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  PreTokenizer() = default;
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace bw24::tokenizer
