// A tokenizer vocabulary read from canonical metadata (GGUF keys; Hugging Face tokenizer.json is
// mapped to the same keys by the loader): token texts, scores, types, merges, special ids.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::tokenizer {

enum class VocabKind { kSpm, kBpe };

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

struct Vocab {
  VocabKind kind = VocabKind::kSpm;
  std::string pre = "default";       // pre-tokenizer name (BPE)
  std::vector<std::string> pre_patterns;  // explicit regexes (from tokenizer.json); override `pre`
  bool ignore_merges = false;        // a whole pre-tokenized word that is a token is emitted as is
  bool nfc = false;                  // NFC-normalize text fragments (from tokenizer.json)
  std::vector<std::string> text;
  std::vector<float> score;
  std::vector<TokenType> type;
  std::unordered_map<std::string, int32_t> to_id;
  std::unordered_map<std::string, int32_t> merge_rank;  // "left right" -> rank (BPE)
  int32_t byte_token[256];           // SPM "<0xXX>" ids, -1 if absent
  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1, sep = -1;
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  std::vector<int32_t> eog;          // end-of-generation ids (eos, eot, eom, known turn ends)
  std::vector<int32_t> specials;     // control / user-defined tokens, longest text first
  std::vector<int32_t> specials_by_byte[256];  // the same, bucketed by first byte

  int32_t n_tokens() const { return static_cast<int32_t>(text.size()); }
  int32_t find(const std::string& s) const {
    auto it = to_id.find(s);
    return it == to_id.end() ? -1 : it->second;
  }
  bool is_eog(int32_t id) const;
};

// Code::kNotFound when the metadata has no tokenizer at all.
absl::StatusOr<Vocab> load_vocab(const loaders::TensorDirectory& dir);

}  // namespace bw24::tokenizer
