// Run-ahead decoding's stop at an end of generation, checked against the serial path (CPU tests
// through the reference runner's emulated queue, GPU tests through the CUDA runner's held step):
// a synthetic model whose vocabulary also ends a generation at a token the test has seen the model
// choose (the synthetic GGUF sets only eos = 2), and two sessions decoding up to it.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/synthetic.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"

namespace bw24::test {

inline std::shared_ptr<const engine::Model> synthetic_model(const std::string& shape, const std::string& quant,
                                                            int device, int32_t eot = -1) {
  auto dir = bench::build_synthetic(shape, quant);
  REQUIRE(dir.ok());
  if (eot >= 0) REQUIRE((*dir)->add_meta("tokenizer.ggml.eot_token_id", loaders::MetaValue::of_u32(uint32_t(eot))).ok());
  engine::ModelOptions mo;
  mo.device = device;
  auto m = engine::Model::from_directory(std::move(dir).value(), shape + ":" + quant, mo);
  REQUIRE(m.ok());
  return *m;
}

// The index of the first token of seq at or after `from` that neither occurs before it nor ends a
// generation already: decoding stops there once it does.
inline int first_new_token(const std::vector<int32_t>& seq, int from, const engine::Model& m) {
  for (int k = from; k < int(seq.size()); ++k)
    if (!m.is_eog(seq[size_t(k)]) && std::find(seq.begin(), seq.begin() + k, seq[size_t(k)]) == seq.begin() + k)
      return k;
  return -1;
}

// For greedy and for sampled decoding: the continuation of a prompt on `shape` (serial, no stop),
// a token k >= 3 of it made a stop token, then `ahead` (options a) against `serial` (options b) on
// that model: the same tokens up to and including the stop, kEog at k + 1 tokens, the same logits
// after it (the row that chose the stop), the same 5 tokens after that (the state and the sampler
// as the serial path left them), and a context that fills up the same way.
inline void check_stop_runs(const std::string& shape, const std::string& quant, int device,
                            const engine::SessionOptions& a, const engine::SessionOptions& b) {
  const std::vector<int32_t> prompt = {1, 17, 300, 42, 7, 99, 1000, 5, 64};
  sampling::Params greedy, topk;
  topk.temperature = 0.9f;
  topk.top_k = 40;
  topk.top_p = 0.95f;
  for (const bool sampled : {false, true}) {
    INFO(shape << (sampled ? " sampled" : " greedy"));
    const sampling::Params& p = sampled ? topk : greedy;
    auto plain = synthetic_model(shape, quant, device);
    auto probe = engine::Session::create(plain, b);
    REQUIRE(probe.ok());
    REQUIRE((*probe)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
    std::vector<int32_t> seq(16);
    engine::DecodeResult res;
    REQUIRE((*probe)->decode(p, std::nullopt, true, seq.data(), 16, &res).ok());
    const int k = first_new_token(seq, 3, *plain);
    REQUIRE(k >= 0);
    auto m = synthetic_model(shape, quant, device, seq[size_t(k)]);
    auto x = engine::Session::create(m, a), y = engine::Session::create(m, b);
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    std::vector<int32_t> got[2];
    for (int s = 0; s < 2; ++s) {
      engine::Session& ses = s == 0 ? **x : **y;
      REQUIRE(ses.prefill(prompt.data(), int32_t(prompt.size()), false).ok());
      got[s].resize(16);
      REQUIRE(ses.decode(p, std::nullopt, false, got[s].data(), 16, &res).ok());
      CHECK(res.stop == engine::StopReason::kEog);
      CHECK(res.n_tokens == k + 1);
      got[s].resize(size_t(res.n_tokens));
    }
    CHECK(got[0] == got[1]);
    CHECK(std::vector<int32_t>(seq.begin(), seq.begin() + k + 1) == got[1]);
    const float *la, *lb;
    int32_t ra, rb, va, vb;
    REQUIRE((*x)->logits(&la, &ra, &va).ok());
    REQUIRE((*y)->logits(&lb, &rb, &vb).ok());
    CHECK(std::vector<float>(la, la + va) == std::vector<float>(lb, lb + vb));
    std::vector<int32_t> more[2] = {std::vector<int32_t>(5), std::vector<int32_t>(5)};
    REQUIRE((*x)->decode(p, std::nullopt, true, more[0].data(), 5, &res).ok());
    REQUIRE((*y)->decode(p, std::nullopt, true, more[1].data(), 5, &res).ok());
    CHECK(more[0] == more[1]);
    CHECK((*x)->position() == (*y)->position());
  }
  // A context that fills up: both stop with kContextFull after the same tokens.
  engine::SessionOptions ca = a, cb = b;
  ca.n_ctx = cb.n_ctx = 9 + 6;
  auto m = synthetic_model(shape, quant, device);
  auto x = engine::Session::create(m, ca), y = engine::Session::create(m, cb);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  std::vector<int32_t> got[2] = {std::vector<int32_t>(12), std::vector<int32_t>(12)};
  engine::DecodeResult rx, ry;
  for (auto* s : {&x, &y}) REQUIRE((**s)->prefill(prompt.data(), int32_t(prompt.size()), false).ok());
  REQUIRE((*x)->decode(greedy, std::nullopt, true, got[0].data(), 12, &rx).ok());
  REQUIRE((*y)->decode(greedy, std::nullopt, true, got[1].data(), 12, &ry).ok());
  CHECK(rx.stop == engine::StopReason::kContextFull);
  CHECK(ry.stop == engine::StopReason::kContextFull);
  CHECK(rx.n_tokens == ry.n_tokens);
  CHECK(got[0] == got[1]);
}

}  // namespace bw24::test
