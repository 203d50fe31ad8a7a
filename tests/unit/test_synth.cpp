// bw24-synth's file form: the GGUF writer round-trips a synthetic model byte for byte, and the
// file runs to the same logits as the in-memory model bw24-bench measures.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "benchmarks/synthetic.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"
#include "loaders/gguf/gguf.h"
#include "loaders/gguf/gguf_write.h"

using namespace bw24;

namespace {
std::vector<float> logits_of(std::shared_ptr<const engine::Model> m, const std::vector<int32_t>& prompt) {
  auto s = engine::Session::create(std::move(m), {});
  REQUIRE(s.ok());
  REQUIRE((*s)->prefill(prompt.data(), static_cast<int32_t>(prompt.size()), true).ok());
  const float* p;
  int32_t rows, vocab;
  REQUIRE((*s)->logits(&p, &rows, &vocab).ok());
  return std::vector<float>(p, p + size_t(rows) * vocab);
}
}  // namespace

TEST_CASE("synthetic models written as GGUF read back identically and run the same", "[synth]") {
  const std::string path = (std::filesystem::temp_directory_path() / "bw24_synth_test.gguf").string();
  for (auto [shape, quant] : {std::pair{"tiny-qwen3", "Q4_K_M"}, std::pair{"tiny-qwen3", "Q8_0"},
                              std::pair{"tiny-qwen3moe", "Q4_K_M"}, std::pair{"tiny-qwen35", "Q4_K_M"},
                              std::pair{"tiny-qwen35moe", "Q8_0"}}) {
    INFO(shape << " " << quant);
    auto built = bench::build_synthetic(shape, quant);
    REQUIRE(built.ok());
    REQUIRE(bench::add_synthetic_vocab(**built).ok());
    REQUIRE(loaders::write_gguf(**built, path).ok());
    auto back = loaders::load_gguf(path);
    REQUIRE(back.ok());
    const loaders::TensorDirectory &a = **built, &b = **back;
    REQUIRE(b.tensors().size() == a.tensors().size());
    for (const auto& t : a.tensors()) {
      const loaders::TensorInfo* u = b.tensor(t.name);
      REQUIRE(u != nullptr);
      CHECK(u->type == t.type);
      CHECK(u->ne == t.ne);
      REQUIRE(u->n_bytes == t.n_bytes);
      CHECK(std::memcmp(u->data, t.data, t.n_bytes) == 0);
    }
    for (const auto& [key, v] : a.meta_entries()) {
      const loaders::MetaValue* w = b.meta(key);
      REQUIRE(w != nullptr);
      CHECK(w->to_text() == v.to_text());
    }
    // The same bytes give the same logits, and the file carries a usable tokenizer.
    auto from_file = engine::Model::open(path, {});
    REQUIRE(from_file.ok());
    CHECK((*from_file)->tokenizer() != nullptr);
    auto rebuilt = bench::build_synthetic(shape, quant);
    REQUIRE(rebuilt.ok());
    auto in_memory = engine::Model::from_directory(std::move(rebuilt).value(), "synthetic", {});
    REQUIRE(in_memory.ok());
    const std::vector<int32_t> prompt = {1, 300, 7, 1999, 42};
    CHECK(logits_of(*from_file, prompt) == logits_of(*in_memory, prompt));
  }
  std::filesystem::remove(path);
}
