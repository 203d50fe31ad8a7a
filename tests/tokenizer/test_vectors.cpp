// llama.cpp's tokenizer test vectors (../shared/models/llama.cpp-vocab): every .inp string must
// encode to exactly the .out ids (no BOS, specials not parsed, as llama.cpp's test-tokenizer-0)
// and decode back to the string.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "lib/core/status.h"
#include "lib/tokenizer/tokenizer.h"
#include "loaders/gguf/gguf.h"
#include "loaders/safetensors/hf_tokenizer.h"

using namespace bw24;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

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
