// ABI tests: pinned struct layouts, pinned codes, and NULL / misuse of every export returning a
// code instead of crashing.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <string>

#include "bw24.h"
#include "tests/common/gguf_writer.h"

// Offsets are part of the ABI: changing any of these is a break (append-only structs).
static_assert(sizeof(bw24_errbuf) == 516);
static_assert(offsetof(bw24_model_params, struct_size) == 0);
static_assert(offsetof(bw24_model_params, flags) == 4);
static_assert(offsetof(bw24_model_params, device) == 8);
static_assert(offsetof(bw24_model_params, n_threads) == 12);
static_assert(offsetof(bw24_model_params, vram_budget_bytes) == 16);
static_assert(offsetof(bw24_model_params, progress) == 24);
static_assert(offsetof(bw24_model_params, progress_user) == 32);
static_assert(offsetof(bw24_model_params, options) == 40);
static_assert(sizeof(bw24_model_params) == 48);
static_assert(offsetof(bw24_model_info, n_vocab) == 4);
static_assert(offsetof(bw24_model_info, device) == 20);
static_assert(offsetof(bw24_model_info, n_params) == 24);
static_assert(offsetof(bw24_model_info, n_bytes) == 32);
static_assert(offsetof(bw24_model_info, arch) == 40);
static_assert(offsetof(bw24_model_info, name) == 48);
static_assert(offsetof(bw24_model_info, quant) == 56);
static_assert(sizeof(bw24_model_info) == 64);
static_assert(offsetof(bw24_session_params, n_ctx) == 8);
static_assert(offsetof(bw24_session_params, kv_type_k) == 12);
static_assert(offsetof(bw24_session_params, kv_type_v) == 16);
static_assert(offsetof(bw24_session_params, seed) == 24);
static_assert(sizeof(bw24_session_params) == 32);
static_assert(offsetof(bw24_sampling, temperature) == 8);
static_assert(offsetof(bw24_sampling, top_k) == 12);
static_assert(offsetof(bw24_sampling, top_p) == 16);
static_assert(offsetof(bw24_sampling, min_p) == 20);
static_assert(offsetof(bw24_sampling, repeat_penalty) == 24);
static_assert(offsetof(bw24_sampling, presence_penalty) == 28);
static_assert(offsetof(bw24_sampling, frequency_penalty) == 32);
static_assert(offsetof(bw24_sampling, penalty_last_n) == 36);
static_assert(offsetof(bw24_sampling, seed) == 40);
static_assert(sizeof(bw24_sampling) == 48);
static_assert(offsetof(bw24_special_tokens, flags) == 4);
static_assert(offsetof(bw24_special_tokens, bos) == 8);
static_assert(offsetof(bw24_special_tokens, sep) == 28);
static_assert(sizeof(bw24_special_tokens) == 32);
static_assert(offsetof(bw24_chat_message, content) == 8);
static_assert(sizeof(bw24_chat_message) == 16);
static_assert(BW24_ERR_INTERNAL == 16 && BW24_ERR_BUFFER_TOO_SMALL == 10 && BW24_ERR_CONTEXT_FULL == 9);

namespace {
const std::string kModel = std::string(BW24_TEST_DATA_DIR) + "/golden/qwen3_tied/model.gguf";
}

TEST_CASE("version and capability exports", "[abi]") {
  CHECK(bw24_version_number() == BW24_VERSION_NUMBER);
  CHECK(std::string(bw24_version_string()) == "0.1.0");
  CHECK(std::string(bw24_build_info()).find("bw24 0.1.0") == 0);
  CHECK((bw24_capabilities() & BW24_CAP_CPU) != 0);
  for (int c = 0; c <= 16; ++c) CHECK(std::string(bw24_status_string(c)) != "unknown status");
  CHECK(std::string(bw24_status_string(9999)) == "unknown status");
}

TEST_CASE("every export survives NULL and misuse", "[abi]") {
  bw24_errbuf err;
  bw24_model* m = reinterpret_cast<bw24_model*>(0x1);  // must be reset to NULL on failure
  CHECK(bw24_model_params_default(nullptr, sizeof(bw24_model_params)) == BW24_ERR_INVALID_ARGUMENT);
  bw24_model_params mp;
  CHECK(bw24_model_params_default(&mp, 0) == BW24_ERR_STRUCT_SIZE);
  CHECK(bw24_model_params_default(&mp, 1 << 20) == BW24_ERR_STRUCT_SIZE);
  CHECK(bw24_session_params_default(nullptr, 8) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_sampling_default(nullptr, 8) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_model_open(nullptr, nullptr, &m, &err) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(m == nullptr);
  CHECK(err.code == BW24_ERR_INVALID_ARGUMENT);
  CHECK(std::string(err.msg) == "path is NULL");
  CHECK(bw24_model_open(kModel.c_str(), nullptr, nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  bw24_model_close(nullptr);
  bw24_session_destroy(nullptr);
  bw24_session_cancel(nullptr);
  CHECK(bw24_session_errmsg(nullptr) != nullptr);
  CHECK(bw24_session_position(nullptr) == -1);
  CHECK(bw24_model_meta_count(nullptr) == -1);
  CHECK(bw24_model_get_info(nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_model_meta(nullptr, "k", nullptr, 0, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_model_meta_key(nullptr, 0, nullptr, 0, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  bw24_session* s = nullptr;
  CHECK(bw24_session_create(nullptr, nullptr, &s, &err) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_prefill(nullptr, nullptr, 0, 0) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_decode(nullptr, nullptr, nullptr, 0, nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_logits(nullptr, nullptr, nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_rewind(nullptr, 0) == BW24_ERR_INVALID_ARGUMENT);
  bw24_set_log_callback(nullptr, nullptr);

  // Wrong struct_size on the way in.
  bw24_model_params_default(&mp, sizeof mp);
  mp.struct_size = 2;
  CHECK(bw24_model_open(kModel.c_str(), &mp, &m, &err) == BW24_ERR_STRUCT_SIZE);
  CHECK(std::string(err.msg).find("struct_size") != std::string::npos);
  struct Bigger {
    bw24_model_params p;
    uint64_t future;
  } big{};
  bw24_model_params_default(&big.p, sizeof big);
  big.future = 7;  // a newer caller asking for something this library cannot know
  CHECK(bw24_model_open(kModel.c_str(), &big.p, &m, &err) == BW24_ERR_STRUCT_SIZE);
  big.future = 0;
  REQUIRE(bw24_model_open(kModel.c_str(), &big.p, &m, &err) == BW24_OK);
  CHECK(err.code == 0);
  CHECK(err.msg[0] == '\0');

  // A caller compiled against an older, shorter struct gets defaults for the rest.
  bw24_model_info info;
  info.struct_size = 8;
  info.n_layer = 12345;
  CHECK(bw24_model_get_info(m, &info) == BW24_OK);
  CHECK(info.n_vocab == 256);
  CHECK(info.n_layer == 12345);  // outside the caller's struct: untouched
  info.struct_size = sizeof info;
  REQUIRE(bw24_model_get_info(m, &info) == BW24_OK);
  CHECK(std::string(info.arch) == "qwen3");
  CHECK(std::string(info.quant) == "F32");  // an f32 golden: no general.file_type, every matrix F32
  CHECK(info.n_layer == 2);
  CHECK(info.device == -1);

  // Metadata with the buffer convention.
  size_t need = 0;
  CHECK(bw24_model_meta(m, "general.architecture", nullptr, 0, &need) == BW24_ERR_BUFFER_TOO_SMALL);
  CHECK(need == 5);
  char buf[6];
  CHECK(bw24_model_meta(m, "general.architecture", buf, sizeof buf, &need) == BW24_OK);
  CHECK(std::string(buf) == "qwen3");
  CHECK(bw24_model_meta(m, "no.such.key", buf, sizeof buf, &need) == BW24_ERR_NOT_FOUND);
  CHECK(bw24_model_meta_key(m, 0, buf, sizeof buf, &need) == BW24_ERR_BUFFER_TOO_SMALL);
  CHECK(bw24_model_meta_key(m, -1, buf, sizeof buf, &need) == BW24_ERR_NOT_FOUND);
  CHECK(bw24_model_meta_key(m, bw24_model_meta_count(m), buf, sizeof buf, &need) == BW24_ERR_NOT_FOUND);

  bw24_session_params sp;
  bw24_session_params_default(&sp, sizeof sp);
  sp.kv_type_k = 77;
  CHECK(bw24_session_create(m, &sp, &s, &err) == BW24_ERR_INVALID_ARGUMENT);
  sp.kv_type_k = BW24_KV_FP8_E4M3 + 1;
  CHECK(bw24_session_create(m, &sp, &s, &err) == BW24_ERR_INVALID_ARGUMENT);
  sp.kv_type_k = BW24_KV_AUTO;
  sp.n_ctx = -4;
  CHECK(bw24_session_create(m, &sp, &s, &err) == BW24_ERR_INVALID_ARGUMENT);
  sp.n_ctx = 0;
  CHECK(bw24_session_create(m, &sp, nullptr, &err) == BW24_ERR_INVALID_ARGUMENT);
  REQUIRE(bw24_session_create(m, &sp, &s, &err) == BW24_OK);

  // The session keeps the model alive after the caller's close (refcount).
  bw24_model_close(m);
  int32_t tok = 1;
  CHECK(bw24_session_prefill(s, nullptr, 1, 0) == BW24_ERR_INVALID_ARGUMENT);
  REQUIRE(bw24_session_prefill(s, &tok, 1, 0) == BW24_OK);
  int32_t out[4], n_out = -1;
  CHECK(bw24_session_decode(s, nullptr, nullptr, 4, &n_out, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_decode(s, nullptr, out, 4, nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_decode(s, nullptr, out, -1, &n_out, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  bw24_sampling samp;
  bw24_sampling_default(&samp, sizeof samp);
  samp.struct_size = 0;
  CHECK(bw24_session_decode(s, &samp, out, 4, &n_out, nullptr) == BW24_ERR_STRUCT_SIZE);
  CHECK(bw24_session_logits(s, nullptr, nullptr, nullptr) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_decode(s, nullptr, out, 4, &n_out, nullptr) == BW24_OK);
  CHECK(n_out == 4);
  bw24_session_destroy(s);
}

TEST_CASE("log callback receives lines from any thread and can be reset", "[abi]") {
  static int lines = 0;
  bw24_set_log_callback([](int32_t, const char*, void*) { ++lines; }, nullptr);
  bw24_model* m = nullptr;
  bw24_errbuf err;
  REQUIRE(bw24_model_open(kModel.c_str(), nullptr, &m, &err) == BW24_OK);
  bw24_model_close(m);
  CHECK(lines >= 1);
  bw24_set_log_callback(nullptr, nullptr);
}

namespace {
// A vocab-only GGUF with a tiny byte-level BPE tokenizer and ChatML specials.
std::string tiny_vocab_gguf() {
  bw24::test::GgufWriter w;
  w.kv_str("general.architecture", "llama");
  w.kv_str("tokenizer.ggml.model", "gpt2");
  w.kv_str("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string> toks = {"h", "i", "Ġ", "hi", "Ġhi", "!", "<|im_start|>", "<|im_end|>", "Ċ", "u", "s", "e", "r",
                                   "a", "t", "n"};
  w.kv_arr_str("tokenizer.ggml.tokens", toks);
  std::vector<uint8_t> types;
  for (size_t i = 0; i < toks.size(); ++i) {
    int32_t t = toks[i][0] == '<' ? 3 : 1;
    uint8_t b[4];
    std::memcpy(b, &t, 4);
    types.insert(types.end(), b, b + 4);
  }
  std::vector<uint8_t> payload;
  bw24::test::GgufWriter::put(payload, uint32_t{5});
  bw24::test::GgufWriter::put(payload, uint64_t(toks.size()));
  payload.insert(payload.end(), types.begin(), types.end());
  w.kv_raw("tokenizer.ggml.token_type", 9, payload);
  w.kv_arr_str("tokenizer.ggml.merges", {"h i", "Ġ hi"});
  w.kv_u32("tokenizer.ggml.eos_token_id", 7);
  std::string path = "/tmp/bw24_abi_vocab.gguf";
  w.write(path);
  return path;
}
}  // namespace

TEST_CASE("tokenizer and chat exports: buffers, NULLs, vocab-only models", "[abi]") {
  bw24_errbuf err;
  bw24_model* m = nullptr;
  bw24_model_params mp;
  bw24_model_params_default(&mp, sizeof mp);
  mp.flags = BW24_MODEL_VOCAB_ONLY;
  REQUIRE(bw24_model_open(tiny_vocab_gguf().c_str(), &mp, &m, &err) == BW24_OK);
  bw24_session* s = nullptr;
  CHECK(bw24_session_create(m, nullptr, &s, &err) == BW24_ERR_STATE);
  int32_t ids[8], n = 0;
  CHECK(bw24_tokenize(nullptr, "hi", 2, 0, ids, 8, &n) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_tokenize(m, nullptr, 2, 0, ids, 8, &n) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_tokenize(m, "hi", 2, 0x80, ids, 8, &n) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_tokenize(m, "hi hi!", 6, 0, nullptr, 0, &n) == BW24_ERR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  REQUIRE(bw24_tokenize(m, "hi hi!", 6, 0, ids, 8, &n) == BW24_OK);
  CHECK(n == 3);
  CHECK(ids[0] == 3);
  CHECK(ids[1] == 4);
  CHECK(ids[2] == 5);
  REQUIRE(bw24_tokenize(m, "<|im_end|>", 10, BW24_TOKENIZE_PARSE_SPECIAL, ids, 8, &n) == BW24_OK);
  CHECK((n == 1 && ids[0] == 7));
  char buf[32];
  size_t len = 0;
  int32_t hi[3] = {3, 4, 5};
  CHECK(bw24_detokenize(m, hi, 3, 0, buf, 3, &len) == BW24_ERR_BUFFER_TOO_SMALL);
  CHECK(len == 6);
  REQUIRE(bw24_detokenize(m, hi, 3, 0, buf, sizeof buf, &len) == BW24_OK);
  CHECK(std::string(buf) == "hi hi!");
  int32_t bad = 99;
  CHECK(bw24_detokenize(m, &bad, 1, 0, buf, sizeof buf, &len) == BW24_ERR_TOKEN_OUT_OF_RANGE);
  CHECK(bw24_token_to_piece(m, 4, 0, buf, sizeof buf, &len) == BW24_OK);
  CHECK(std::string(buf) == " hi");
  CHECK(bw24_token_to_piece(m, 7, 0, buf, sizeof buf, &len) == BW24_OK);
  CHECK(len == 0);
  CHECK(bw24_token_to_piece(m, 7, BW24_DETOKENIZE_RENDER_SPECIAL, buf, sizeof buf, &len) == BW24_OK);
  CHECK(std::string(buf) == "<|im_end|>");
  CHECK(bw24_token_to_piece(m, -1, 0, buf, sizeof buf, &len) == BW24_ERR_TOKEN_OUT_OF_RANGE);
  CHECK(bw24_token_is_eog(m, 7) == 1);
  CHECK(bw24_token_is_eog(m, 3) == 0);
  CHECK(bw24_token_is_eog(nullptr, 3) == -1);
  bw24_special_tokens sp;
  sp.struct_size = sizeof sp;
  REQUIRE(bw24_model_special_tokens(m, &sp) == BW24_OK);
  CHECK(sp.eos == 7);
  CHECK(sp.bos == -1);
  CHECK(bw24_model_special_tokens(m, nullptr) == BW24_ERR_INVALID_ARGUMENT);

  bw24_chat_message msgs[2] = {{"user", "hi"}, {"assistant", "hi!"}};
  CHECK(bw24_chat_render(m, msgs, 2, BW24_CHAT_ADD_GENERATION_PROMPT, nullptr, nullptr, 0, &len, &err) ==
        BW24_ERR_BUFFER_TOO_SMALL);
  std::string expect = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhi!<|im_end|>\n<|im_start|>assistant\n";
  CHECK(len == expect.size());
  std::vector<char> out(len + 1);
  REQUIRE(bw24_chat_render(m, msgs, 2, BW24_CHAT_ADD_GENERATION_PROMPT, nullptr, out.data(), out.size(), &len, &err) == BW24_OK);
  CHECK(std::string(out.data()) == expect);  // no template in the file: the ChatML fallback
  CHECK(bw24_chat_render(m, msgs, 2, 0, "{{ messages[0].content }}{% if %}", out.data(), out.size(), &len, &err) ==
        BW24_ERR_UNSUPPORTED);
  CHECK(std::string(err.msg).find("chat template") != std::string::npos);
  REQUIRE(bw24_chat_render_json(m, R"({"messages":[{"role":"user","content":"x"}],"who":"me"})", 0,
                                "{{ who }}:{{ messages[0].content }}", out.data(), out.size(), &len, &err) == BW24_OK);
  CHECK(std::string(out.data()) == "me:x");
  CHECK(bw24_chat_render_json(m, "{not json", 0, nullptr, out.data(), out.size(), &len, &err) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_chat_render(nullptr, msgs, 2, 0, nullptr, out.data(), out.size(), &len, &err) == BW24_ERR_INVALID_ARGUMENT);
  bw24_chat_message null_role = {nullptr, "x"};
  CHECK(bw24_chat_render(m, &null_role, 1, 0, nullptr, out.data(), out.size(), &len, &err) == BW24_ERR_INVALID_ARGUMENT);
  bw24_model_close(m);

  // A model without a tokenizer says so.
  REQUIRE(bw24_model_open(kModel.c_str(), nullptr, &m, &err) == BW24_OK);
  CHECK(bw24_tokenize(m, "a", 1, 0, ids, 8, &n) == BW24_ERR_UNSUPPORTED);
  CHECK(bw24_token_to_piece(m, 1, 0, buf, sizeof buf, &len) == BW24_ERR_UNSUPPORTED);
  bw24_model_close(m);
}
