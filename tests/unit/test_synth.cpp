// bw24-synth's file form: the GGUF writer round-trips a synthetic model byte for byte, and the
// file runs to the same logits as the in-memory model bw24-bench measures.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "benchmarks/synthetic.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"
#include "loaders/gguf/gguf.h"
#include "loaders/gguf/gguf_write.h"
#include "tests/common/stop_runs.h"

using namespace bw24;

namespace {
std::vector<float> logits_of(std::shared_ptr<const engine::Model> m, const std::vector<int32_t>& prompt,
                             bool round_act_int8 = false) {
  engine::SessionOptions opt;
  opt.round_act_int8 = round_act_int8;
  auto s = engine::Session::create(std::move(m), opt);
  REQUIRE(s.ok());
  REQUIRE((*s)->prefill(prompt.data(), static_cast<int32_t>(prompt.size()), true).ok());
  const float* p;
  int32_t rows, vocab;
  REQUIRE((*s)->logits(&p, &rows, &vocab).ok());
  return std::vector<float>(p, p + size_t(rows) * vocab);
}
// The session's last logits row.
std::vector<float> last_row(engine::Session& s) {
  const float* p;
  int32_t rows, vocab;
  REQUIRE(s.logits(&p, &rows, &vocab).ok());
  return std::vector<float>(p + size_t(rows - 1) * vocab, p + size_t(rows) * vocab);
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
    // The file records its mix as llama-quantize does (general.file_type), and reports read it back.
    CHECK((*from_file)->quant() == quant);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a model names what its weights are stored as", "[synth]") {
  // general.file_type's ids, as llama.cpp numbers them (llama.h's LLAMA_FTYPE_MOSTLY_*).
  CHECK(loaders::file_type_name(0) == "F32");
  CHECK(loaders::file_type_name(3) == "Q4_1");
  CHECK(loaders::file_type_name(7) == "Q8_0");
  CHECK(loaders::file_type_name(15) == "Q4_K_M");
  CHECK(loaders::file_type_name(30) == "IQ4_XS");
  CHECK(loaders::file_type_name(32) == "BF16");
  CHECK(loaders::file_type_name(38) == "MXFP4_MOE");
  for (int64_t retired : {5, 6, 33, 34, 35, 39, -1, 1024}) CHECK(loaders::file_type_name(retired).empty());
  // Without general.file_type (a Hugging Face directory): the matrices' types by bytes.
  auto hf = engine::Model::open(BW24_TEST_DATA_DIR "/golden/qwen3", {});
  REQUIRE(hf.ok());
  CHECK((*hf)->quant() == "F32");
}

// The CPU reference's int8 activation rounding (the GPU-vs-CPU diagnostics' like-for-like mode)
// touches only products over quantized weights: BF16 models give identical logits, Q8_0 ones move
// by about the int8 rounding (a few percent of the logit norm on the tiny shape).
TEST_CASE("int8 activation rounding in the CPU reference applies to quantized weights only", "[synth]") {
  const std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5};
  for (const char* quant : {"BF16", "Q8_0"}) {
    INFO(quant);
    auto built = bench::build_synthetic("tiny-qwen3", quant);
    REQUIRE(built.ok());
    auto m = engine::Model::from_directory(std::move(built).value(), "tiny-qwen3", {});
    REQUIRE(m.ok());
    const std::vector<float> plain = logits_of(*m, prompt), rounded = logits_of(*m, prompt, true);
    double num = 0, den = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
      num += (plain[i] - rounded[i]) * double(plain[i] - rounded[i]);
      den += plain[i] * double(plain[i]);
    }
    const double rel = std::sqrt(num / den);
    if (std::string(quant) == "BF16") CHECK(rel == 0.0);
    else CHECK((rel > 1e-4 && rel < 5e-2));
  }
}

// The session's device token choice (greedy argmax and top-k sampling on the runner, a pending
// choice per step, logits copied back on demand, a sampled choice's draw given back when unused)
// against the host path, on the CPU reference emulating a device's choice
// (SessionOptions::emulate_device_choice): the same tokens through two decode calls, a change to
// penalized sampling (host path), a reseed, an end-of-generation stop, logits() after a device
// step, and a rewind; a dense model and a hybrid (recurrent state).
TEST_CASE("device token choice in the session equals the host path", "[synth]") {
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) {
    INFO(shape);
    const auto m = test::synthetic_model(shape, "Q8_0", -1);
    const int V = m->graph().n_vocab;
    engine::SessionOptions host_opt, dev_opt;
    host_opt.seed = dev_opt.seed = 99;
    dev_opt.emulate_device_choice = true;
    auto host = engine::Session::create(m, host_opt), dev = engine::Session::create(m, dev_opt);
    REQUIRE(host.ok());
    REQUIRE(dev.ok());
    const std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64};
    for (auto* s : {&host, &dev}) REQUIRE((**s)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    sampling::Params greedy, topk, penalized;
    topk.temperature = 0.9f;
    topk.top_k = 40;
    topk.top_p = 0.95f;
    topk.min_p = 0.02f;
    penalized = topk;
    penalized.repeat_penalty = 1.3f;
    // Each step: (params, reseed, tokens); both sessions run the same calls.
    struct Step {
      sampling::Params p;
      std::optional<uint64_t> reseed;
      int32_t n;
    };
    const Step steps[] = {{greedy, std::nullopt, 6}, {greedy, std::nullopt, 3}, {topk, std::nullopt, 7},
                          {topk, std::nullopt, 5}, {penalized, std::nullopt, 3}, {topk, 1234, 4},
                          {topk, std::nullopt, 2}, {greedy, std::nullopt, 2}};
    for (const Step& st : steps) {
      std::vector<int32_t> a(size_t(st.n)), b(size_t(st.n));
      engine::DecodeResult ra, rb;
      REQUIRE((*host)->decode(st.p, st.reseed, true, a.data(), st.n, &ra).ok());
      REQUIRE((*dev)->decode(st.p, st.reseed, true, b.data(), st.n, &rb).ok());
      CHECK(a == b);
      REQUIRE(ra.n_tokens == rb.n_tokens);
    }
    // logits() after device steps: the row the host computed.
    const float *la, *lb;
    int32_t rows_a, rows_b, va, vb;
    REQUIRE((*host)->logits(&la, &rows_a, &va).ok());
    REQUIRE((*dev)->logits(&lb, &rows_b, &vb).ok());
    CHECK(std::vector<float>(la + size_t(rows_a - 1) * V, la + size_t(rows_a) * V) ==
          std::vector<float>(lb + size_t(rows_b - 1) * V, lb + size_t(rows_b) * V));
    // A rewind, then sampling again from the same seed.
    for (auto* s : {&host, &dev}) REQUIRE((**s)->rewind((**s)->position() - 5).ok());
    std::vector<int32_t> a(6), b(6);
    engine::DecodeResult ra, rb;
    REQUIRE((*host)->decode(topk, 7, true, a.data(), 6, &ra).ok());
    REQUIRE((*dev)->decode(topk, 7, true, b.data(), 6, &rb).ok());
    CHECK(a == b);
  }
}

// Run-ahead decoding (Runner::queue_step, here the reference runner's emulated queue: a step taken
// back never runs) against the host's serial path: the stop at an end of generation, greedy and
// sampled (the held step's draw given back), logits and further tokens after it, a full context.
TEST_CASE("run-ahead decoding stops where the serial path stops", "[synth]") {
  engine::SessionOptions ahead, serial;
  ahead.seed = serial.seed = 5;
  ahead.emulate_device_choice = true;
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) test::check_stop_runs(shape, "Q8_0", -1, ahead, serial);
}

// A recurrent state cannot be cut back, so after a rewind the session rebuilds it from the kept
// tokens: logits(), a prefill and a decode from there equal those of a session that never went
// past them (fed in the same passes: a delta net's multi-token pass rounds differently).
TEST_CASE("a hybrid's session after a rewind equals one that stopped there", "[synth]") {
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) {
    INFO(shape);
    const auto m = test::synthetic_model(shape, "Q8_0", -1);
    const std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64}, more = {11, 12, 13};
    auto a = engine::Session::create(m, {}), b = engine::Session::create(m, {});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE((*a)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    REQUIRE((*a)->rewind(5).ok());
    REQUIRE((*b)->prefill(prompt.data(), 4, false).ok());
    REQUIRE((*b)->prefill(prompt.data() + 4, 1, false).ok());
    CHECK(last_row(**a) == last_row(**b));
    REQUIRE((*a)->rewind(4).ok());
    REQUIRE((*b)->rewind(4).ok());
    REQUIRE((*a)->prefill(more.data(), int32_t(more.size()), false).ok());  // without logits() first
    REQUIRE((*b)->prefill(more.data(), int32_t(more.size()), false).ok());
    CHECK(last_row(**a) == last_row(**b));
    std::vector<int32_t> ta(5), tb(5);
    engine::DecodeResult ra, rb;
    REQUIRE((*a)->rewind(6).ok());
    REQUIRE((*b)->rewind(6).ok());
    REQUIRE((*a)->decode({}, std::nullopt, true, ta.data(), 5, &ra).ok());
    REQUIRE((*b)->decode({}, std::nullopt, true, tb.data(), 5, &rb).ok());
    CHECK(ta == tb);
  }
}

// A request that fails half way (RunnerOptions::fail_forward_at: after the first layer, as a device
// error would) leaves the session as it was before it: a recurrent state half updated is rebuilt,
// and logits(), decode() and prefill() go on as in a session that never failed. Host decoding,
// the device token choice and run-ahead decoding (emulated by the reference runner).
TEST_CASE("a session goes on after a failed request as if it had not been made", "[synth]") {
  for (const char* shape : {"tiny-qwen3", "tiny-qwen35"}) {
    const auto m = test::synthetic_model(shape, "Q8_0", -1);
    const std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64}, more = {11, 12, 13};
    for (int mode = 0; mode < 3; ++mode) {  // host decoding, device choice step by step, run ahead
      for (int32_t fail_at : {2, 4}) {     // a prefill's pass, or a decode step
        INFO(shape << " mode " << mode << " fail_at " << fail_at);
        engine::SessionOptions opt;
        opt.emulate_device_choice = mode > 0;
        opt.run_ahead = mode == 2;
        auto ref = engine::Session::create(m, opt);
        opt.fail_forward_at = fail_at;
        auto s = engine::Session::create(m, opt);
        REQUIRE(s.ok());
        REQUIRE(ref.ok());
        REQUIRE((*s)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());  // call 1
        std::vector<int32_t> out(4);
        engine::DecodeResult r;
        absl::Status st;
        if (fail_at == 2) {
          st = (*s)->prefill(more.data(), int32_t(more.size()), false);
        } else {
          st = (*s)->decode({}, std::nullopt, true, out.data(), 4, &r);
          out.resize(size_t(r.n_tokens));  // the committed ones
        }
        REQUIRE(!st.ok());
        CHECK(std::string(st.message()).find("injected") != std::string::npos);
        // The reference: the same tokens in the same passes as the rebuild (all but the last,
        // then the last alone).
        std::vector<int32_t> kept = prompt;
        if (fail_at == 4) kept.insert(kept.end(), out.begin(), out.end());
        REQUIRE((*s)->position() == int32_t(kept.size()));
        REQUIRE((*ref)->prefill(kept.data(), int32_t(kept.size()) - 1, false).ok());
        REQUIRE((*ref)->prefill(kept.data() + kept.size() - 1, 1, false).ok());
        CHECK(last_row(**s) == last_row(**ref));
        std::vector<int32_t> a(5), b(5);
        if (mode == 0 && fail_at == 2) {  // once more, with the failure in the pass that recomputes the logits
          const auto& layers = m->graph().layers;
          const bool hybrid = std::any_of(layers.begin(), layers.end(), [](const auto& L) { return L.recurrent; });
          opt.fail_forward_at = hybrid ? 3 : 2;
          auto t = engine::Session::create(m, opt);
          REQUIRE(t.ok());
          REQUIRE((*t)->prefill(kept.data(), int32_t(kept.size()), false).ok());  // call 1
          REQUIRE((*t)->rewind(int32_t(kept.size()) - 1).ok());  // a hybrid replays: call 2
          const float* p;
          int32_t rows, vocab;
          REQUIRE(!(*t)->logits(&p, &rows, &vocab).ok());  // the recomputing pass fails
          REQUIRE((*t)->position() == int32_t(kept.size()) - 1);
          auto u = engine::Session::create(m, {});
          REQUIRE(u.ok());
          REQUIRE((*u)->prefill(kept.data(), int32_t(kept.size()) - 2, false).ok());
          REQUIRE((*u)->prefill(kept.data() + kept.size() - 2, 1, false).ok());
          CHECK(last_row(**t) == last_row(**u));
        }
        REQUIRE((*s)->decode({}, std::nullopt, true, a.data(), 5, &r).ok());
        REQUIRE((*ref)->decode({}, std::nullopt, true, b.data(), 5, &r).ok());
        CHECK(a == b);
        REQUIRE((*s)->prefill(more.data(), int32_t(more.size()), false).ok());
        REQUIRE((*ref)->prefill(more.data(), int32_t(more.size()), false).ok());
        CHECK(last_row(**s) == last_row(**ref));
      }
    }
  }
}
