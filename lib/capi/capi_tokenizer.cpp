// Tokenizer exports: tokenize, detokenize, token pieces, special ids.
#include "lib/capi/shim.h"

using namespace bw24;

namespace {

const tokenizer::Tokenizer* tok_of(const bw24_model* m) { return m ? m->model->tokenizer() : nullptr; }

}  // namespace

extern "C" {

bw24_status bw24_tokenize(const bw24_model* model, const char* text, size_t len, uint32_t flags,
                          int32_t* tokens, int32_t cap, int32_t* n_out) {
  if (n_out) *n_out = 0;
  if (!model || !n_out || (!text && len > 0) || (!tokens && cap > 0) || cap < 0) return BW24_ERR_INVALID_ARGUMENT;
  if (flags & ~(BW24_TOKENIZE_ADD_SPECIAL | BW24_TOKENIZE_PARSE_SPECIAL)) return BW24_ERR_INVALID_ARGUMENT;
  const tokenizer::Tokenizer* t = tok_of(model);
  if (!t) return BW24_ERR_UNSUPPORTED;
  try {
    std::vector<int32_t> ids = t->encode(std::string_view(text ? text : "", len),
                                         flags & BW24_TOKENIZE_ADD_SPECIAL, flags & BW24_TOKENIZE_PARSE_SPECIAL);
    if (ids.size() > static_cast<size_t>(INT32_MAX)) return BW24_ERR_BUFFER_TOO_SMALL;
    *n_out = static_cast<int32_t>(ids.size());
    if (ids.size() > static_cast<size_t>(cap)) return BW24_ERR_BUFFER_TOO_SMALL;
    std::copy(ids.begin(), ids.end(), tokens);
    return BW24_OK;
  } catch (const std::bad_alloc&) {
    return BW24_ERR_OUT_OF_MEMORY;
  } catch (...) {
    return BW24_ERR_INTERNAL;
  }
}

bw24_status bw24_detokenize(const bw24_model* model, const int32_t* tokens, int32_t n, uint32_t flags,
                            char* buf, size_t cap, size_t* n_out) {
  if (n_out) *n_out = 0;
  if (!model || (!tokens && n > 0) || n < 0) return BW24_ERR_INVALID_ARGUMENT;
  if (flags & ~(BW24_DETOKENIZE_RENDER_SPECIAL | BW24_DETOKENIZE_KEEP_SPACE_PREFIX)) return BW24_ERR_INVALID_ARGUMENT;
  const tokenizer::Tokenizer* t = tok_of(model);
  if (!t) return BW24_ERR_UNSUPPORTED;
  for (int32_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= t->vocab().n_tokens()) return BW24_ERR_TOKEN_OUT_OF_RANGE;
  try {
    return capi::copy_out(t->decode(tokens, static_cast<size_t>(n), flags & BW24_DETOKENIZE_RENDER_SPECIAL,
                                    flags & BW24_DETOKENIZE_KEEP_SPACE_PREFIX),
                          buf, cap, n_out);
  } catch (...) {
    return BW24_ERR_OUT_OF_MEMORY;
  }
}

bw24_status bw24_token_to_piece(const bw24_model* model, int32_t token, uint32_t flags, char* buf,
                                size_t cap, size_t* n_out) {
  if (n_out) *n_out = 0;
  if (!model) return BW24_ERR_INVALID_ARGUMENT;
  if (flags & ~BW24_DETOKENIZE_RENDER_SPECIAL) return BW24_ERR_INVALID_ARGUMENT;
  const tokenizer::Tokenizer* t = tok_of(model);
  if (!t) return BW24_ERR_UNSUPPORTED;
  if (token < 0 || token >= t->vocab().n_tokens()) return BW24_ERR_TOKEN_OUT_OF_RANGE;
  try {
    return capi::copy_out(t->token_to_piece(token, flags & BW24_DETOKENIZE_RENDER_SPECIAL), buf, cap, n_out);
  } catch (...) {
    return BW24_ERR_OUT_OF_MEMORY;
  }
}

bw24_status bw24_model_special_tokens(const bw24_model* model, bw24_special_tokens* out) {
  if (!model || !out) return BW24_ERR_INVALID_ARGUMENT;
  const tokenizer::Tokenizer* t = tok_of(model);
  if (!t) return BW24_ERR_UNSUPPORTED;
  const tokenizer::Vocab& v = t->vocab();
  bw24_special_tokens full{};
  full.struct_size = sizeof full;
  full.flags = (v.add_bos ? BW24_SPECIAL_ADD_BOS : 0u) | (v.add_eos ? BW24_SPECIAL_ADD_EOS : 0u);
  full.bos = v.bos;
  full.eos = v.eos;
  full.eot = v.eot;
  full.unk = v.unk;
  full.pad = v.pad;
  full.sep = v.sep;
  return capi::write_struct(out, out->struct_size, full);
}

int32_t bw24_token_is_eog(const bw24_model* model, int32_t token) {
  if (!model) return -1;
  return model->model->is_eog(token) ? 1 : 0;
}

}  // extern "C"
