// Session semantics through the C ABI: the argmax gate (prefill vs token-by-token), rewind,
// context limits, cancellation, call-order errors and seeded sampling.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "bw24.h"
#include "tests/common/gguf_writer.h"

namespace {

// K and V cache types (BW24_KV_*) of a session.
struct KvTypes {
  int32_t k, v;
};

struct Session {
  bw24_model* model = nullptr;
  bw24_session* s = nullptr;
  Session(const std::string& path, int32_t n_ctx = 0, int32_t kv = BW24_KV_F32, uint64_t seed = 1)
      : Session(path, KvTypes{kv, kv}, n_ctx, seed) {}
  Session(const std::string& path, KvTypes kv, int32_t n_ctx = 0, uint64_t seed = 1) {
    bw24_errbuf err;
    REQUIRE(bw24_model_open(path.c_str(), nullptr, &model, &err) == BW24_OK);
    bw24_session_params p;
    bw24_session_params_default(&p, sizeof p);
    p.n_ctx = n_ctx;
    p.kv_type_k = kv.k;
    p.kv_type_v = kv.v;
    p.seed = seed;
    REQUIRE(bw24_session_create(model, &p, &s, &err) == BW24_OK);
  }
  ~Session() {
    bw24_session_destroy(s);
    bw24_model_close(model);
  }
  std::vector<float> logits_rows() {
    const float* l;
    int32_t rows, vocab;
    REQUIRE(bw24_session_logits(s, &l, &rows, &vocab) == BW24_OK);
    return std::vector<float>(l, l + size_t(rows) * vocab);
  }
  std::vector<int32_t> decode(int n, float temp = 0) {
    bw24_sampling sp;
    bw24_sampling_default(&sp, sizeof sp);
    sp.flags = BW24_SAMPLE_IGNORE_EOG;
    sp.temperature = temp;
    std::vector<int32_t> out(static_cast<size_t>(n));
    int32_t n_out = 0;
    REQUIRE(bw24_session_decode(s, &sp, out.data(), n, &n_out, nullptr) == BW24_OK);
    out.resize(static_cast<size_t>(n_out));
    return out;
  }
};

const std::vector<int32_t> kPrompt = {1, 17, 42, 99, 3, 200, 77, 5, 128, 64};

std::string golden(const char* name, const char* form = "/model.gguf") {
  return std::string(BW24_TEST_DATA_DIR) + "/golden/" + name + form;
}

std::string tiny_path() {
  static std::string p = [] {
    auto b = bw24::test::TinyLlama{}.bytes();
    std::string path = (std::filesystem::temp_directory_path() / "bw24_tiny_session.gguf").string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return path;
  }();
  return p;
}

}  // namespace

// Whether the golden model at path takes KV type kv: the block types (q8_0, q4_0) need head_dim to
// be a multiple of 32; the llama golden has head_dim 16 and must be refused by name.
bool takes_kv(const std::string& path, int32_t kv) {
  if (kv != BW24_KV_Q8_0 && kv != BW24_KV_Q4_0) return true;
  if (path.find("/llama/") == std::string::npos) return true;
  bw24_errbuf err;
  bw24_model* m = nullptr;
  REQUIRE(bw24_model_open(path.c_str(), nullptr, &m, &err) == BW24_OK);
  bw24_session_params p;
  bw24_session_params_default(&p, sizeof p);
  p.kv_type_k = p.kv_type_v = kv;
  bw24_session* s = nullptr;
  CHECK(bw24_session_create(m, &p, &s, &err) == BW24_ERR_UNSUPPORTED);
  CHECK(std::string(err.msg).find("head_dim") != std::string::npos);
  CHECK(s == nullptr);
  bw24_model_close(m);
  return false;
}

constexpr int32_t kAllKv[] = {BW24_KV_F32, BW24_KV_F16, BW24_KV_BF16, BW24_KV_Q8_0, BW24_KV_Q4_0, BW24_KV_FP8_E4M3};

TEST_CASE("argmax gate: prefill and token-by-token decode agree on every position", "[gate]") {
  for (std::string path : {golden("llama"), golden("qwen3", ""), golden("qwen3_tied"), golden("gemma3"), golden("gemma3", "")}) {
    for (int32_t kv : kAllKv) {
      INFO(path << " kv " << kv);
      if (!takes_kv(path, kv)) continue;
      Session all(path, 0, kv), step(path, 0, kv);
      REQUIRE(bw24_session_prefill(all.s, kPrompt.data(), int32_t(kPrompt.size()), BW24_PREFILL_ALL_LOGITS) == BW24_OK);
      auto batch = all.logits_rows();
      const size_t V = batch.size() / kPrompt.size();
      for (size_t t = 0; t < kPrompt.size(); ++t) {
        REQUIRE(bw24_session_prefill(step.s, &kPrompt[t], 1, 0) == BW24_OK);
        auto row = step.logits_rows();
        double err = 0, mag = 0;
        size_t a = 0, b = 0;
        for (size_t i = 0; i < V; ++i) {
          err = std::max(err, double(std::fabs(row[i] - batch[t * V + i])));
          mag = std::max(mag, double(std::fabs(batch[t * V + i])));
          if (row[i] > row[a]) a = i;
          if (batch[t * V + i] > batch[t * V + b]) b = i;
        }
        REQUIRE(a == b);
        REQUIRE(err / mag < 1e-5);
      }
    }
  }
}

// Every KV type on the CPU reference against the f32 cache, K and V chosen independently: the max
// logit error relative to the largest logit stays inside what the type's rounding allows
// (measured on this tiny random-weight golden, 2026-11-29: f16 3.9e-4, bf16 3.0e-3, q8_0 1.0e-2,
// K q8_0 / V f16 6.6e-3, fp8 e4m3 6.3e-2, q4_0 0.245 — 4-bit keys move the small logits of a
// 64-wide random model a lot; bounds about 1.6-2.5x those). That each type is consistent with
// itself is the argmax gate's job (prefill and decode read the same rounded rows).
TEST_CASE("KV cache types: every BW24_KV_* type on the CPU, K and V independent", "[session]") {
  const std::string path = golden("qwen3", "");
  Session base(path, 0, BW24_KV_F32);
  REQUIRE(bw24_session_prefill(base.s, kPrompt.data(), int32_t(kPrompt.size()), BW24_PREFILL_ALL_LOGITS) == BW24_OK);
  const auto want = base.logits_rows();
  struct Case {
    int32_t k, v;
    double tol;
  };
  for (Case c : {Case{BW24_KV_F16, BW24_KV_F16, 1e-3}, Case{BW24_KV_BF16, BW24_KV_BF16, 6e-3},
                 Case{BW24_KV_Q8_0, BW24_KV_Q8_0, 2e-2}, Case{BW24_KV_Q4_0, BW24_KV_Q4_0, 0.4},
                 Case{BW24_KV_FP8_E4M3, BW24_KV_FP8_E4M3, 0.12}, Case{BW24_KV_Q8_0, BW24_KV_F16, 1.5e-2}}) {
    INFO("K " << c.k << " V " << c.v);
    Session s(path, KvTypes{c.k, c.v});
    REQUIRE(bw24_session_prefill(s.s, kPrompt.data(), int32_t(kPrompt.size()), BW24_PREFILL_ALL_LOGITS) == BW24_OK);
    const auto l = s.logits_rows();
    double err_max = 0, mag = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      err_max = std::max(err_max, double(std::fabs(l[i] - want[i])));
      mag = std::max(mag, double(std::fabs(want[i])));
    }
    std::cout << "KV K " << c.k << " V " << c.v << ": max logit error / max |logit| " << err_max / mag << "\n";
    CHECK(err_max / mag < c.tol);
    CHECK(err_max > 0);  // the cache really is in the other type
  }
}

TEST_CASE("rewind then decode reproduces an uninterrupted greedy run", "[session]") {
  Session s(golden("qwen3_tied"));
  REQUIRE(bw24_session_prefill(s.s, kPrompt.data(), int32_t(kPrompt.size()), 0) == BW24_OK);
  auto full = s.decode(24);
  REQUIRE(bw24_session_position(s.s) == int32_t(kPrompt.size() + 24));
  REQUIRE(bw24_session_rewind(s.s, int32_t(kPrompt.size() + 8)) == BW24_OK);
  // The token at position prompt+8 was full[8]; decoding resumes from the logits after full[7].
  REQUIRE(bw24_session_position(s.s) == int32_t(kPrompt.size() + 8));
  auto again = s.decode(16);
  REQUIRE(again.size() == 16);
  for (size_t i = 0; i < 16; ++i) CHECK(again[i] == full[8 + i]);
  CHECK(bw24_session_rewind(s.s, 1000) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_rewind(s.s, -1) == BW24_ERR_INVALID_ARGUMENT);
  REQUIRE(bw24_session_rewind(s.s, 0) == BW24_OK);
  int32_t out[4], n_out = -1;
  CHECK(bw24_session_decode(s.s, nullptr, out, 4, &n_out, nullptr) == BW24_ERR_STATE);
  CHECK(n_out == 0);
  CHECK(std::string(bw24_session_errmsg(s.s)).find("prefill") != std::string::npos);
}

TEST_CASE("context limits: prefill overflow, decode until full, then refuse", "[session]") {
  Session s(tiny_path(), 12);
  std::vector<int32_t> thirteen(13, 5);
  CHECK(bw24_session_prefill(s.s, thirteen.data(), 13, 0) == BW24_ERR_CONTEXT_FULL);
  CHECK(std::string(bw24_session_errmsg(s.s)).find("exceeds the context of 12") != std::string::npos);
  CHECK(bw24_session_position(s.s) == 0);
  REQUIRE(bw24_session_prefill(s.s, thirteen.data(), 10, 0) == BW24_OK);
  bw24_sampling sp;
  bw24_sampling_default(&sp, sizeof sp);
  sp.flags = BW24_SAMPLE_IGNORE_EOG;
  int32_t out[8], n_out = 0, stop = -1;
  REQUIRE(bw24_session_decode(s.s, &sp, out, 8, &n_out, &stop) == BW24_OK);
  CHECK(n_out == 3);
  CHECK(stop == BW24_STOP_CONTEXT_FULL);
  CHECK(bw24_session_position(s.s) == 12);
  CHECK(bw24_session_decode(s.s, &sp, out, 8, &n_out, &stop) == BW24_ERR_CONTEXT_FULL);
  CHECK(n_out == 0);
}

TEST_CASE("bad tokens and call order", "[session]") {
  Session s(tiny_path());
  const float* l;
  int32_t rows, vocab;
  CHECK(bw24_session_logits(s.s, &l, &rows, &vocab) == BW24_ERR_STATE);
  int32_t bad[3] = {1, 64, 2};
  CHECK(bw24_session_prefill(s.s, bad, 3, 0) == BW24_ERR_TOKEN_OUT_OF_RANGE);
  CHECK(std::string(bw24_session_errmsg(s.s)).find("token 64 at index 1") != std::string::npos);
  bad[1] = -5;
  CHECK(bw24_session_prefill(s.s, bad, 3, 0) == BW24_ERR_TOKEN_OUT_OF_RANGE);
  CHECK(bw24_session_position(s.s) == 0);
  CHECK(bw24_session_prefill(s.s, bad, 0, 0) == BW24_ERR_INVALID_ARGUMENT);
  CHECK(bw24_session_prefill(s.s, bad, 1, 0x80) == BW24_ERR_INVALID_ARGUMENT);
  REQUIRE(bw24_session_prefill(s.s, bad, 1, 0) == BW24_OK);
  CHECK(std::string(bw24_session_errmsg(s.s)).empty());
  bw24_sampling sp;
  bw24_sampling_default(&sp, sizeof sp);
  sp.top_p = 0;
  int32_t out[2], n_out;
  CHECK(bw24_session_decode(s.s, &sp, out, 2, &n_out, nullptr) == BW24_ERR_INVALID_ARGUMENT);
}

TEST_CASE("stop at end-of-generation: the token is returned but not fed", "[session]") {
  // The tiny llama's eos is 2; find a prompt whose greedy next token is 2 by forcing it: use a
  // sampler with repeat penalty off and check the contract generically on whatever is produced.
  Session s(tiny_path(), 128);
  REQUIRE(bw24_session_prefill(s.s, kPrompt.data(), 3, 0) == BW24_OK);
  int32_t out[64], n_out = 0, stop = -1;
  REQUIRE(bw24_session_decode(s.s, nullptr, out, 64, &n_out, &stop) == BW24_OK);
  if (stop == BW24_STOP_EOG) {
    CHECK(out[n_out - 1] == 2);
    CHECK(bw24_session_position(s.s) == 3 + n_out - 1);
  } else {
    CHECK(stop == BW24_STOP_LENGTH);
    CHECK(bw24_session_position(s.s) == 3 + 64);
    for (int i = 0; i < n_out; ++i) CHECK(out[i] != 2);
  }
}

TEST_CASE("seeded sampling is reproducible and reseedable", "[session]") {
  Session a(golden("qwen3_tied"), 0, BW24_KV_F32, 99), b(golden("qwen3_tied"), 0, BW24_KV_F32, 99);
  REQUIRE(bw24_session_prefill(a.s, kPrompt.data(), 4, 0) == BW24_OK);
  REQUIRE(bw24_session_prefill(b.s, kPrompt.data(), 4, 0) == BW24_OK);
  CHECK(a.decode(20, 1.5f) == b.decode(20, 1.5f));
}

TEST_CASE("cancel from another thread stops a long decode at a committed position", "[session]") {
  Session s(tiny_path(), 4096);
  REQUIRE(bw24_session_prefill(s.s, kPrompt.data(), 3, 0) == BW24_OK);
  std::vector<int32_t> out(4000);
  int32_t n_out = 0;
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    while (!done.load()) {
      bw24_session_cancel(s.s);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  bw24_sampling sp;
  bw24_sampling_default(&sp, sizeof sp);
  sp.flags = BW24_SAMPLE_IGNORE_EOG;
  bw24_status st = bw24_session_decode(s.s, &sp, out.data(), 4000, &n_out, nullptr);
  done = true;
  canceller.join();
  CHECK(st == BW24_ERR_CANCELLED);
  CHECK(n_out < 4000);
  CHECK(bw24_session_position(s.s) == 3 + n_out);
  // The session is still usable.
  CHECK(bw24_session_decode(s.s, &sp, out.data(), 2, &n_out, nullptr) == BW24_OK);
}
