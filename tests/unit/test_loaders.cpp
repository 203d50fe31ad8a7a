#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "lib/core/status.h"
#include "loaders/gguf/gguf.h"
#include "loaders/open.h"
#include "loaders/safetensors/hf_model.h"
#include "loaders/safetensors/safetensors.h"
#include "tests/common/gguf_writer.h"
#include "tests/common/safetensors_writer.h"

using namespace bw24;
using namespace bw24::loaders;
using bw24::test::GgufWriter;

namespace {

std::vector<uint8_t> small_gguf() {
  GgufWriter w;
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", 2);
  w.kv_f32("llama.rope.freq_base", 10000.0f);
  w.kv_bool("flag", true);
  w.kv_arr_str("tokenizer.ggml.tokens", {"a", "bc", "\"q\""});
  w.kv_arr_f32("tokenizer.ggml.scores", {0.5f, -1.0f, 2.0f});
  w.tensor_f32("a.weight", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  w.tensor_f32("b.weight", {3}, {9, 10, 11});
  return w.bytes();
}

absl::Status parse(const std::vector<uint8_t>& b) {
  TensorDirectory d;
  return parse_gguf(b.data(), b.size(), &d);
}

}  // namespace

TEST_CASE("gguf: a valid file parses with every value and tensor", "[gguf]") {
  auto b = small_gguf();
  TensorDirectory d;
  REQUIRE(parse_gguf(b.data(), b.size(), &d).ok());
  CHECK(d.meta("general.architecture")->s == "llama");
  CHECK(d.meta("llama.block_count")->as_int() == 2);
  CHECK(d.meta("flag")->to_text() == "true");
  CHECK(d.meta("tokenizer.ggml.tokens")->to_text() == "[\"a\",\"bc\",\"\\\"q\\\"\"]");
  CHECK(d.meta("tokenizer.ggml.scores")->to_text() == "[0.5,-1,2]");
  const TensorInfo* a = d.tensor("a.weight");
  REQUIRE(a);
  CHECK(a->ne[0] == 4);
  CHECK(a->ne[1] == 2);
  CHECK(a->n_bytes == 32);
  float f;
  std::memcpy(&f, a->data + 12, 4);
  CHECK(f == 4.0f);
  CHECK((a->data - b.data()) % 32 == 0);
}

TEST_CASE("gguf: every truncation of a valid file is rejected as FORMAT", "[gguf]") {
  auto b = small_gguf();
  for (size_t n = 0; n < b.size(); ++n) {
    std::vector<uint8_t> cut(b.begin(), b.begin() + n);
    absl::Status st = parse(cut);
    INFO("prefix " << n << " of " << b.size());
    REQUIRE(!st.ok());
    REQUIRE(code_of(st) == Code::kFormat);
  }
}

TEST_CASE("gguf: random bit flips never crash", "[gguf]") {
  auto b = small_gguf();
  std::mt19937 rng(11);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    auto c = b;
    int flips = 1 + i % 3;
    for (int k = 0; k < flips; ++k) c[rng() % c.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    absl::Status st = parse(c);
    if (!st.ok()) {
      ++rejected;
      REQUIRE((code_of(st) == Code::kFormat || code_of(st) == Code::kUnsupported));
      REQUIRE(!message_of(st).empty());
    }
  }
  CHECK(rejected > 100);
}

TEST_CASE("gguf: hand-made bad values", "[gguf]") {
  SECTION("bad magic and version") {
    auto b = small_gguf();
    b[0] = 'X';
    CHECK(message_of(parse(b)).find("not a GGUF") != std::string::npos);
    b = GgufWriter(1).bytes();
    CHECK(message_of(parse(b)).find("version 1") != std::string::npos);
  }
  SECTION("invalid metadata type") {
    GgufWriter w;
    w.kv_raw("k", 13, {0, 0, 0, 0});
    CHECK(message_of(parse(w.bytes())).find("invalid value type 13") != std::string::npos);
  }
  SECTION("bool that is not 0/1") {
    GgufWriter w;
    w.kv_raw("k", 7, {2});
    CHECK(code_of(parse(w.bytes())) == Code::kFormat);
  }
  SECTION("duplicate key and duplicate tensor") {
    GgufWriter w;
    w.kv_u32("k", 1);
    w.kv_u32("k", 2);
    CHECK(message_of(parse(w.bytes())).find("duplicate metadata key") != std::string::npos);
    GgufWriter t;
    t.tensor_f32("x", {1}, {1});
    t.tensor_f32("x", {1}, {1});
    CHECK(message_of(parse(t.bytes())).find("duplicate tensor") != std::string::npos);
  }
  SECTION("tensor name longer than ggml allows") {
    GgufWriter w;
    w.tensor_f32(std::string(64, 'n'), {1}, {1});
    CHECK(message_of(parse(w.bytes())).find("bytes long") != std::string::npos);
  }
  SECTION("alignment other than 32") {
    GgufWriter w(3, 64);
    w.kv_u32("general.alignment", 64);
    w.tensor_f32("x", {2}, {1, 2});
    w.tensor_f32("y", {2}, {3, 4});
    auto b = w.bytes();
    TensorDirectory d;
    REQUIRE(parse_gguf(b.data(), b.size(), &d).ok());
    CHECK((d.tensor("y")->data - b.data()) % 64 == 0);
  }
}

TEST_CASE("gguf/safetensors: every regression file is rejected with FORMAT", "[gguf][safetensors]") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(BW24_TEST_DATA_DIR "/bad")) {
    std::ifstream f(e.path(), std::ios::binary);
    std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    INFO(e.path().filename().string());
    if (e.path().extension() == ".gguf") {
      absl::Status st = parse(b);
      REQUIRE(!st.ok());
      CHECK(code_of(st) == Code::kFormat);
      UNSCOPED_INFO(message_of(st));
    } else {
      auto st = parse_safetensors(b.data(), b.size());
      REQUIRE(!st.ok());
      CHECK(code_of(st.status()) == Code::kFormat);
    }
    ++n;
  }
  CHECK(n >= 20);
}

TEST_CASE("safetensors: valid file and HF name mapping", "[safetensors]") {
  std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}})";
  std::vector<uint8_t> b = bw24::test::safetensors_file(header, 12);
  auto e = parse_safetensors(b.data(), b.size());
  REQUIRE(e.ok());
  REQUIRE(e->size() == 1);
  CHECK((*e)[0].shape == std::vector<int64_t>{2, 3});
  CHECK(hf_to_gguf_name("model.layers.12.self_attn.q_proj.weight") == "blk.12.attn_q.weight");
  CHECK(hf_to_gguf_name("model.language_model.layers.0.mlp.down_proj.weight") == "blk.0.ffn_down.weight");
  CHECK(hf_to_gguf_name("model.embed_tokens.weight") == "token_embd.weight");
  CHECK(hf_to_gguf_name("model.layers.x.mlp.down_proj.weight").empty());
  CHECK(hf_to_gguf_name("model.rotary_emb.inv_freq").empty());
}

TEST_CASE("HF directories: missing pieces and quantized checkpoints are named", "[safetensors]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "bw24_hf_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto st = open_model_source(dir.string());
  CHECK(code_of(st.status()) == Code::kIo);
  CHECK(message_of(st.status()).find("config.json") != std::string::npos);
  std::ofstream(dir / "config.json") << R"({"model_type":"llama","quantization_config":{"quant_method":"fp8"}})";
  st = open_model_source(dir.string());
  CHECK(code_of(st.status()) == Code::kUnsupported);
  CHECK(message_of(st.status()).find("fp8") != std::string::npos);
  std::ofstream(dir / "config.json") << R"({"model_type":"llama"})";
  st = open_model_source(dir.string());
  CHECK(message_of(st.status()).find("no *.safetensors") != std::string::npos);
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map":{"w":"../evil.safetensors"}})";
  st = open_model_source(dir.string());
  CHECK(code_of(st.status()) == Code::kFormat);
  fs::remove_all(dir);
  CHECK(code_of(open_model_source("/nonexistent/model.gguf").status()) == Code::kIo);
}
