#include "lib/tokenizer/vocab.h"

#include <algorithm>
#include <cstdio>

#include "lib/core/status.h"

namespace bw24::tokenizer {

using loaders::MetaType;
using loaders::MetaValue;

bool Vocab::is_eog(int32_t id) const { return std::find(eog.begin(), eog.end(), id) != eog.end(); }

namespace {

int32_t id_or(const loaders::TensorDirectory& dir, const char* key, int32_t fallback, int32_t n) {
  const MetaValue* v = dir.meta(key);
  if (!v) return fallback;
  auto i = v->as_int();
  // Converters write 0xFFFFFFFF (or -1) for "none"; anything outside the vocabulary is none.
  return i && *i >= 0 && *i < n ? static_cast<int32_t>(*i) : -1;
}

bool flag_or(const loaders::TensorDirectory& dir, const char* key, bool fallback) {
  const MetaValue* v = dir.meta(key);
  return v && v->type == MetaType::BOOL ? v->u != 0 : fallback;
}

}  // namespace

absl::StatusOr<Vocab> load_vocab(const loaders::TensorDirectory& dir) {
  const MetaValue* model = dir.meta("tokenizer.ggml.model");
  const MetaValue* tokens = dir.meta("tokenizer.ggml.tokens");
  if (!model || !tokens) return error(Code::kNotFound, "the model has no tokenizer metadata");
  if (model->type != MetaType::STRING)
    return error(Code::kModel, "tokenizer.ggml.model is not a string");
  Vocab v;
  if (model->s == "llama") v.kind = VocabKind::kSpm;
  else if (model->s == "gpt2") v.kind = VocabKind::kBpe;
  else
    return error(Code::kUnsupported, "tokenizer model '{}' is not supported (llama = SentencePiece "
                 "and gpt2 = byte-level BPE are)", model->s);
  if (tokens->type != MetaType::ARRAY || tokens->elem_type != MetaType::STRING || tokens->count == 0 ||
      tokens->count > (1u << 24))
    return error(Code::kModel, "tokenizer.ggml.tokens is not a non-empty string array");
  const int32_t n = static_cast<int32_t>(tokens->count);
  v.text = tokens->strings;
  v.score.assign(static_cast<size_t>(n), 0.0f);
  v.type.assign(static_cast<size_t>(n), TokenType::kNormal);
  if (const MetaValue* s = dir.meta("tokenizer.ggml.scores")) {
    if (s->type != MetaType::ARRAY || s->count != tokens->count || s->elem_type != MetaType::F32)
      return error(Code::kModel, "tokenizer.ggml.scores must be an f32 array of {} entries", n);
    for (int32_t i = 0; i < n; ++i) v.score[static_cast<size_t>(i)] = static_cast<float>(*s->number_at(static_cast<uint64_t>(i)));
  }
  if (const MetaValue* t = dir.meta("tokenizer.ggml.token_type")) {
    MetaValue elem;
    elem.type = t->elem_type;
    if (t->type != MetaType::ARRAY || t->count != tokens->count || !elem.is_integer())
      return error(Code::kModel, "tokenizer.ggml.token_type must be an integer array of {} entries", n);
    for (int32_t i = 0; i < n; ++i) {
      int64_t ty = t->int_at(static_cast<uint64_t>(i)).value_or(1);
      v.type[static_cast<size_t>(i)] = ty >= 0 && ty <= 6 ? static_cast<TokenType>(ty) : TokenType::kNormal;
    }
  }
  v.to_id.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v.to_id.emplace(v.text[static_cast<size_t>(i)], i);  // first wins
  if (const MetaValue* m = dir.meta("tokenizer.ggml.merges")) {
    if (m->type != MetaType::ARRAY || m->elem_type != MetaType::STRING)
      return error(Code::kModel, "tokenizer.ggml.merges is not a string array");
    v.merge_rank.reserve(m->count);
    for (uint64_t r = 0; r < m->count; ++r) v.merge_rank.emplace(m->strings[r], static_cast<int32_t>(r));
  } else if (v.kind == VocabKind::kBpe) {
    return error(Code::kModel, "byte-level BPE tokenizer without tokenizer.ggml.merges");
  }
  std::fill(std::begin(v.byte_token), std::end(v.byte_token), -1);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.byte_token[b] = v.find(name);
  }
  const bool spm = v.kind == VocabKind::kSpm;
  if (const MetaValue* p = dir.meta("tokenizer.ggml.pre"); p && p->type == MetaType::STRING) v.pre = p->s;
  if (const MetaValue* pp = dir.meta("tokenizer.bw24.pre_patterns");
      pp && pp->type == MetaType::ARRAY && pp->elem_type == MetaType::STRING)
    v.pre_patterns = pp->strings;
  v.ignore_merges = v.pre == "llama-bpe" || v.pre == "llama3" || flag_or(dir, "tokenizer.bw24.ignore_merges", false);
  if (const MetaValue* nz = dir.meta("tokenizer.bw24.normalizer"); nz && nz->type == MetaType::STRING) {
    if (nz->s != "nfc") return error(Code::kUnsupported, "tokenizer normalizer '{}' is not supported", nz->s);
    v.nfc = true;
  }
  v.bos = id_or(dir, "tokenizer.ggml.bos_token_id", spm ? 1 : -1, n);
  v.eos = id_or(dir, "tokenizer.ggml.eos_token_id", spm ? 2 : -1, n);
  v.unk = id_or(dir, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1, n);
  v.eot = id_or(dir, "tokenizer.ggml.eot_token_id", -1, n);
  v.eom = id_or(dir, "tokenizer.ggml.eom_token_id", -1, n);
  v.pad = id_or(dir, "tokenizer.ggml.padding_token_id", -1, n);
  v.sep = id_or(dir, "tokenizer.ggml.seperator_token_id", -1, n);  // sic: llama.cpp's key
  v.add_bos = flag_or(dir, "tokenizer.ggml.add_bos_token", spm);
  v.add_eos = flag_or(dir, "tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = flag_or(dir, "tokenizer.ggml.add_space_prefix", spm);
  if (v.add_bos && v.bos < 0) return error(Code::kModel, "add_bos_token is true but there is no bos token");

  // End of generation: eos/eot/eom plus the turn-end tokens of common chat formats.
  for (int32_t id : {v.eos, v.eot, v.eom})
    if (id >= 0 && !v.is_eog(id)) v.eog.push_back(id);
  for (const char* t : {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>",
                        "<|endoftext|>", "<|end_of_text|>", "</s>"}) {
    int32_t id = v.find(t);
    if (id >= 0 && v.type[static_cast<size_t>(id)] == TokenType::kControl && !v.is_eog(id)) v.eog.push_back(id);
  }
  for (int32_t i = 0; i < n; ++i) {
    TokenType t = v.type[static_cast<size_t>(i)];
    if ((t == TokenType::kControl || t == TokenType::kUserDefined) && !v.text[static_cast<size_t>(i)].empty())
      v.specials.push_back(i);
  }
  std::stable_sort(v.specials.begin(), v.specials.end(), [&](int32_t a, int32_t b) {
    return v.text[static_cast<size_t>(a)].size() > v.text[static_cast<size_t>(b)].size();
  });
  for (int32_t id : v.specials)
    v.specials_by_byte[static_cast<unsigned char>(v.text[static_cast<size_t>(id)][0])].push_back(id);
  return v;
}

}  // namespace bw24::tokenizer
