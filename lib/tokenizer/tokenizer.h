// Text <-> token ids for SentencePiece-style (scores + byte fallback) and byte-level BPE
// (merges + regex pre-tokenizer) vocabularies, with added/special tokens.
//
// encode: invalid UTF-8 is replaced by U+FFFD (one per maximal ill-formed subsequence, as Python
// does); special tokens written in the text are matched leftmost-longest (control tokens only with
// parse_special; user-defined tokens always); every other fragment goes through the model's
// algorithm. decode: token pieces are concatenated as bytes, so a UTF-8 character split across
// byte tokens comes back whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tokenizer/pretokenizer.h"
#include "lib/tokenizer/vocab.h"

namespace bw24::tokenizer {

class Tokenizer {
 public:
  static absl::StatusOr<std::unique_ptr<Tokenizer>> create(Vocab vocab);
  // From a directory's metadata; Code::kNotFound if it has no tokenizer.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> create(const loaders::TensorDirectory& dir);

  // add_special: BOS / EOS as the vocabulary asks. parse_special: match control tokens in text.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;
  // The bytes of one token (may be part of a UTF-8 character). Control tokens are empty unless
  // render_special.
  std::string token_to_piece(int32_t id, bool render_special) const;
  // The bytes of a token sequence; SentencePiece vocabularies drop the leading space that
  // add_space_prefix put there, unless keep_space_prefix.
  std::string decode(const int32_t* ids, size_t n, bool render_special, bool keep_space_prefix = false) const;

  const Vocab& vocab() const { return vocab_; }

 private:
  explicit Tokenizer(Vocab v) : vocab_(std::move(v)) {}
  void encode_spm(const std::string& text, std::vector<int32_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
  void bpe_word(const std::string& word, std::vector<int32_t>& out) const;

  Vocab vocab_;
  std::unique_ptr<PreTokenizer> pre_;
};

}  // namespace bw24::tokenizer
