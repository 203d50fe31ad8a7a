// llama.cpp's tokenizer test vectors (../shared/models/llama.cpp-vocab): every .inp string must
// encode to exactly the .out ids (no BOS, specials not parsed, as llama.cpp's test-tokenizer-0)
// and decode back to the string.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "nlohmann/json.hpp"

#include "lib/core/status.h"
#include "lib/tokenizer/tokenizer.h"
#include "lib/tokenizer/unicode.h"
#include "loaders/gguf/gguf.h"
#include "loaders/safetensors/hf_tokenizer.h"
#include "tests/common/files.h"

using namespace bw24;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) { return test::slurp(p.string()); }

std::vector<std::string> split_inputs(const std::string& all) {
  std::vector<std::string> out;
  const std::string sep = "\n__ggml_vocab_test__\n";
  size_t start = 0;
  for (;;) {
    size_t p = all.find(sep, start);
    if (p == std::string::npos) break;
    out.push_back(all.substr(start, p - start));
    start = p + sep.size();
  }
  return out;
}

std::vector<std::vector<int32_t>> read_outputs(const std::string& all) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream in(all);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<int32_t> ids;
    std::istringstream ls(line);
    int32_t id;
    while (ls >> id) ids.push_back(id);
    out.push_back(ids);
  }
  return out;
}

fs::path vocab_dir() {
  fs::path d = fs::path(BW24_SHARED_DIR) / "models" / "llama.cpp-vocab";
  if (!fs::exists(d)) {
    std::cout << "SKIPPED: " << d.string() << " not found (../shared is absent)" << std::endl;
    std::exit(77);
  }
  return d;
}

int check_vectors(const tokenizer::Tokenizer& tok, const fs::path& inp, const fs::path& out, bool check_decode) {
  auto inputs = split_inputs(slurp(inp));
  auto expected = read_outputs(slurp(out));
  REQUIRE(inputs.size() == expected.size());
  int ok = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO(out.filename().string() << " case " << i << ": '" << inputs[i] << "'");
    auto ids = tok.encode(inputs[i], /*add_special=*/false, /*parse_special=*/false);
    CHECK(ids == expected[i]);
    if (check_decode) CHECK(tok.decode(ids.data(), ids.size(), false) == inputs[i]);
    ok += ids == expected[i];
  }
  std::cout << out.filename().string() << ": " << ok << "/" << inputs.size() << " identical\n";
  return ok;
}

}  // namespace

TEST_CASE("llama.cpp vocab vectors: llama-spm, phi-3, gpt-2, deepseek-coder", "[shared][tokenizer]") {
  fs::path d = vocab_dir();
  for (std::string name : {"llama-spm", "phi-3", "gpt-2", "deepseek-coder"}) {
    fs::path gguf = d / ("ggml-vocab-" + name + ".gguf");
    auto dir = loaders::load_gguf(gguf.string());
    REQUIRE(dir.ok());
    auto tok = tokenizer::Tokenizer::create(**dir);
    INFO(message_of(tok.status()));
    REQUIRE(tok.ok());
    check_vectors(**tok, d / ("ggml-vocab-" + name + ".gguf.inp"), d / ("ggml-vocab-" + name + ".gguf.out"), true);
  }
}

TEST_CASE("llama.cpp qwen2 vectors with the real Qwen3 tokenizer.json", "[shared][tokenizer]") {
  fs::path d = vocab_dir();
  fs::path qdir = fs::path(BW24_SHARED_DIR) / "models" / "qwen3-tokenizer";
  loaders::TensorDirectory dir;
  absl::Status st = loaders::load_hf_tokenizer(qdir.string(), &dir);
  INFO(message_of(st));
  REQUIRE(st.ok());
  auto tok = tokenizer::Tokenizer::create(dir);
  INFO(message_of(tok.status()));
  REQUIRE(tok.ok());
  CHECK((*tok)->vocab().n_tokens() == 151669);
  check_vectors(**tok, d / "ggml-vocab-qwen2.gguf.inp", d / "ggml-vocab-qwen2.gguf.out", true);
}

// Agreement with the Hugging Face tokenizers package on the generated corpus
// (tests/reference/make_tokenizer_corpus.py): encode without BOS/EOS, special-token text parsed.
namespace {

std::unique_ptr<tokenizer::Tokenizer> corpus_tokenizer(const std::string& name, std::string* source) {
  const fs::path shared = fs::path(BW24_SHARED_DIR) / "models";
  const fs::path models = fs::path(BW24_SOURCE_DIR) / "models";
  static const std::map<std::string, fs::path> kGguf = {
      {"gpt-2", shared / "llama.cpp-vocab" / "ggml-vocab-gpt-2.gguf"},
      {"deepseek-coder", shared / "llama.cpp-vocab" / "ggml-vocab-deepseek-coder.gguf"},
      {"llama-spm", shared / "llama.cpp-vocab" / "ggml-vocab-llama-spm.gguf"},
      {"phi-3", shared / "llama.cpp-vocab" / "ggml-vocab-phi-3.gguf"},
      {"smollm2", models / "SmolLM2-135M-Instruct.Q4_1.gguf"},
      {"gemma3", models / "gemma-3-270m-q4_k_m.gguf"},
  };
  static std::vector<std::unique_ptr<loaders::TensorDirectory>> keep;
  if (name == "qwen3") {
    fs::path dir = shared / "qwen3-tokenizer";
    *source = dir.string();
    if (!fs::exists(dir / "tokenizer.json")) return nullptr;
    auto d = std::make_unique<loaders::TensorDirectory>();
    REQUIRE(loaders::load_hf_tokenizer(dir.string(), d.get()).ok());
    auto t = tokenizer::Tokenizer::create(*d);
    REQUIRE(t.ok());
    keep.push_back(std::move(d));
    return std::move(t).value();
  }
  fs::path p = kGguf.at(name);
  *source = p.string();
  if (!fs::exists(p)) return nullptr;
  auto d = loaders::load_gguf(p.string());
  REQUIRE(d.ok());
  auto t = tokenizer::Tokenizer::create(**d);
  REQUIRE(t.ok());
  keep.push_back(std::move(d).value());
  return std::move(t).value();
}

// A corpus entry's bytes: "text", or "hex" for strings that are not valid UTF-8.
std::string corpus_text(const nlohmann::json& e) {
  if (e.contains("text")) return e["text"].get<std::string>();
  std::string hex = e["hex"], out;
  for (size_t k = 0; k + 1 < hex.size(); k += 2) out += static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16));
  return out;
}

void check_corpus(const std::string& name) {
  std::string source;
  auto tok = corpus_tokenizer(name, &source);
  if (!tok) {
    std::cout << "SKIPPED: " << source << " not found" << std::endl;
    std::exit(77);
  }
  const std::string data = std::string(BW24_TEST_DATA_DIR) + "/tokenizer/";
  auto corpus = nlohmann::json::parse(slurp(data + "corpus.json"));
  auto expected = nlohmann::json::parse(slurp(data + name + ".ids.json"));
  REQUIRE(corpus.size() == expected.size());
  REQUIRE(corpus.size() >= 2000);
  size_t same = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    std::string text = corpus_text(corpus[i]);
    auto ids = tok->encode(text, /*add_special=*/false, /*parse_special=*/true);
    auto want = expected[i].get<std::vector<int32_t>>();
    INFO(name << " string " << i << ": " << corpus[i].dump());
    CHECK(ids == want);
    same += ids == want;
  }
  std::cout << name << ": " << same << "/" << corpus.size() << " strings identical to HF tokenizers\n";
}

}  // namespace

TEST_CASE("HF tokenizers agreement: qwen3", "[corpus][qwen3]") { check_corpus("qwen3"); }
TEST_CASE("HF tokenizers agreement: gpt-2", "[corpus][gpt-2]") { check_corpus("gpt-2"); }
TEST_CASE("HF tokenizers agreement: deepseek-coder", "[corpus][deepseek-coder]") { check_corpus("deepseek-coder"); }
TEST_CASE("HF tokenizers agreement: smollm2", "[corpus][smollm2]") { check_corpus("smollm2"); }
TEST_CASE("HF tokenizers agreement: llama-spm", "[corpus][llama-spm]") { check_corpus("llama-spm"); }
TEST_CASE("HF tokenizers agreement: phi-3", "[corpus][phi-3]") { check_corpus("phi-3"); }
TEST_CASE("HF tokenizers agreement: gemma3", "[corpus][gemma3]") { check_corpus("gemma3"); }

TEST_CASE("pre-tokenizers split like HF tokenizers' pre_tokenize_str", "[pretokenizers]") {
  const std::string data = std::string(BW24_TEST_DATA_DIR) + "/tokenizer/";
  auto corpus = nlohmann::json::parse(slurp(data + "corpus.json"));
  auto expected = nlohmann::json::parse(slurp(data + "pretokenizers.json"));
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    auto pre = tokenizer::PreTokenizer::create(it.key());
    REQUIRE(pre.ok());
    size_t same = 0;
    for (size_t i = 0; i < corpus.size(); ++i) {
      std::string text = tokenizer::sanitize_utf8(corpus_text(corpus[i]));
      std::vector<std::string> got;
      for (std::string_view p : (*pre)->split(text)) got.push_back(tokenizer::bytes_to_bpe_text(p));
      auto want = it.value()[i].get<std::vector<std::string>>();
      INFO(it.key() << " string " << i << ": " << corpus[i].dump());
      CHECK(got == want);
      same += got == want;
    }
    std::cout << "pre-tokenizer " << it.key() << ": " << same << "/" << corpus.size() << " identical to HF\n";
  }
}
