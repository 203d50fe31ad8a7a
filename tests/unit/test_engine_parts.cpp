#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "lib/kv/kv_cache.h"
#include "lib/ref/delta_rule.h"
#include "lib/ref/ops.h"
#include "lib/sampling/sampler.h"

using namespace bw24;

TEST_CASE("rmsnorm plain and (1+w)", "[ref]") {
  float x[4] = {1, 2, 3, 4}, w[4] = {1, 0.5f, 2, 0}, y[4];
  float inv = 1.0f / std::sqrt((1 + 4 + 9 + 16) / 4.0f + 1e-5f);
  ref::rmsnorm(y, x, w, 4, 1e-5f, false);
  CHECK(y[0] == Approx(1 * inv));
  CHECK(y[2] == Approx(6 * inv));
  CHECK(y[3] == 0.0f);
  ref::rmsnorm(y, x, w, 4, 1e-5f, true);
  CHECK(y[1] == Approx(2 * inv * 1.5f));
}

TEST_CASE("rope: adjacent-pair and half-split rotate the same pairs differently", "[ref]") {
  // With 4 dims: norm rotates (0,1),(2,3); neox rotates (0,2),(1,3). Pair 0 has angle = pos.
  float a[4] = {1, 0, 0, 0}, b[4] = {1, 0, 0, 0};
  ref::rope(a, 4, 1, 10000.0f, false);
  ref::rope(b, 4, 1, 10000.0f, true);
  CHECK(a[0] == Approx(std::cos(1.0)));
  CHECK(a[1] == Approx(std::sin(1.0)));
  CHECK(b[0] == Approx(std::cos(1.0)));
  CHECK(b[2] == Approx(std::sin(1.0)));
  CHECK(b[1] == 0.0f);
  // Position 0 is the identity; partial rope leaves the tail alone.
  float c[6] = {1, 2, 3, 4, 5, 6};
  ref::rope(c, 4, 0, 10000.0f, true);
  CHECK(c[0] == 1.0f);
  ref::rope(c, 4, 7, 10000.0f, true);
  CHECK(c[4] == 5.0f);
  CHECK(c[5] == 6.0f);
}

TEST_CASE("attention of one query over identical keys averages the values", "[ref]") {
  float q[2] = {1, 1}, k[6] = {1, 0, 1, 0, 1, 0}, v[6] = {1, 2, 3, 4, 5, 6}, out[2], scratch[3];
  ref::attend_head(out, q, k, 2, v, 2, 0, 2, 2, 1.0f, scratch);
  CHECK(out[0] == Approx(3.0f));
  CHECK(out[1] == Approx(4.0f));
}

TEST_CASE("kv type names: each name parses back to its type, with its bytes an element", "[kv]") {
  using bw24::kv::KvType;
  const std::map<KvType, double> bytes = {{KvType::kF32, 4.0},          {KvType::kF16, 2.0},
                                          {KvType::kBF16, 2.0},         {KvType::kQ8_0, 34.0 / 32},
                                          {KvType::kQ4_0, 18.0 / 32},   {KvType::kFp8E4M3, 1.0}};
  for (const auto& [t, b] : bytes) {
    const auto parsed = bw24::kv::kv_type_from_name(bw24::kv::kv_type_name(t));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == t);
    CHECK(bw24::kv::kv_element_bytes(t) == b);
  }
  CHECK_FALSE(bw24::kv::kv_type_from_name("q8").has_value());
  CHECK_FALSE(bw24::kv::kv_type_from_name("").has_value());
  CHECK_FALSE(bw24::kv::kv_type_from_name("auto").has_value());  // the programs resolve auto by device first
}

TEST_CASE("kv rotation: the Walsh-Hadamard blocks and the sizes each cache pair gets", "[kv]") {
  // Against the matrix written out: H_4 = 1/2 [[1,1,1,1],[1,-1,1,-1],[1,1,-1,-1],[1,-1,-1,1]].
  float x[8] = {1, 2, 3, 4, -1, 0, 0, 0};
  kv::hadamard_rotate(x, 8, 4);
  const float want[8] = {5, -1, -2, 0, -0.5f, -0.5f, -0.5f, -0.5f};
  for (int i = 0; i < 8; ++i) CHECK(x[i] == Approx(want[i]));
  // Orthonormal and its own inverse at every size a cache uses: norms kept, twice = identity.
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (int32_t block : {64, 128, 256}) {
    std::vector<float> y(512), y0;
    for (float& v : y) v = nd(rng);
    y0 = y;
    double n0 = 0, n1 = 0, back = 0;
    for (float v : y) n0 += double(v) * v;
    kv::hadamard_rotate(y.data(), 512, block);
    for (float v : y) n1 += double(v) * v;
    kv::hadamard_rotate(y.data(), 512, block);
    for (size_t i = 0; i < y.size(); ++i) back = std::max(back, double(std::fabs(y[i] - y0[i])));
    INFO("block " << block);
    CHECK(n1 == Approx(n0).epsilon(1e-5));
    CHECK(back < 1e-5);
  }
  using kv::KvType;
  auto rot = [](KvType k, KvType v, int32_t d) {
    kv::KvRotation r = kv::kv_rotation(k, v, d);
    return std::pair{r.k, r.v};
  };
  CHECK(rot(KvType::kQ4_0, KvType::kQ4_0, 128) == std::pair{128, 64});  // K: the whole row, V: blocks of 64
  CHECK(rot(KvType::kQ8_0, KvType::kQ8_0, 192) == std::pair{64, 64});   // the largest power of two dividing 192
  CHECK(rot(KvType::kQ8_0, KvType::kF16, 256) == std::pair{256, 0});    // only the block types rotate
  CHECK(rot(KvType::kFp8E4M3, KvType::kQ4_0, 64) == std::pair{0, 64});
  CHECK(rot(KvType::kQ4_0, KvType::kQ4_0, 96) == std::pair{0, 0});      // not a multiple of 64
  CHECK(rot(KvType::kQ4_0, KvType::kQ4_0, 32) == std::pair{0, 0});
  CHECK(rot(KvType::kF16, KvType::kBF16, 128) == std::pair{0, 0});
}

TEST_CASE("kv rotation: a row with an outlier channel comes back closer from a rotated q4_0 cache", "[kv]") {
  const kv::KvShape shape{1, 4, 2, 128};
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<float> k(2 * 128), v(2 * 128);
  for (float& x : k) x = nd(rng);
  for (float& x : v) x = nd(rng);
  k[5] = 40.0f;    // a RoPE'd key's outlier: one channel sets its q4_0 block's step
  k[128 + 77] = -35.0f;
  auto error = [&](bool rotate) {
    auto c = kv::HostKvCache::create(shape, kv::KvType::kQ4_0, kv::KvType::kQ4_0, rotate);
    REQUIRE(c.ok());
    CHECK(c->rotation().any() == rotate);
    c->store(0, 2, k.data(), v.data());
    std::vector<float> ko(128), vo(128);
    double ek = 0, ev = 0;
    for (int32_t h = 0; h < 2; ++h) {
      c->gather(0, h, 2, 2, ko.data(), vo.data());  // rows come back in the caller's basis
      for (int i = 0; i < 128; ++i) {
        ek += std::pow(ko[i] - k[h * 128 + i], 2);
        ev += std::pow(vo[i] - v[h * 128 + i], 2);
      }
    }
    return std::pair{std::sqrt(ek), std::sqrt(ev)};
  };
  const auto [ek0, ev0] = error(false);
  const auto [ek1, ev1] = error(true);
  INFO("K error " << ek0 << " -> " << ek1 << ", V error " << ev0 << " -> " << ev1);
  CHECK(ek1 < 0.5 * ek0);  // the outliers' blocks no longer round their neighbours to a 5-wide step
  CHECK(ev1 < 1.5 * ev0);  // gaussian rows: about the same either way
  CHECK(ek1 > 0);          // still a 4-bit cache
}

TEST_CASE("sampler: greedy, ties, penalties, determinism, top-k/p, min-p", "[sampling]") {
  sampling::Sampler s(1);
  sampling::Params greedy;
  std::vector<float> l = {0.1f, 2.0f, 2.0f, -1.0f};
  CHECK(s.sample(l.data(), 4, greedy, {}) == 1);  // lowest id wins the tie
  sampling::Params rep = greedy;
  rep.repeat_penalty = 2.0f;
  CHECK(s.sample(l.data(), 4, rep, {1}) == 2);
  sampling::Params hot;
  hot.temperature = 1.0f;
  hot.top_k = 2;
  std::map<int, int> seen;
  for (int i = 0; i < 2000; ++i) seen[s.sample(l.data(), 4, hot, {})]++;
  CHECK(seen.size() == 2);
  CHECK(seen[1] > 800);
  CHECK(seen[2] > 800);
  sampling::Sampler a(42), b(42);
  hot.top_k = 0;
  for (int i = 0; i < 100; ++i) REQUIRE(a.sample(l.data(), 4, hot, {}) == b.sample(l.data(), 4, hot, {}));
  sampling::Params minp;
  minp.temperature = 1.0f;
  minp.min_p = 0.5f;
  std::vector<float> m = {0.0f, 5.0f, 0.0f, 4.9f};
  for (int i = 0; i < 200; ++i) {
    int t = s.sample(m.data(), 4, minp, {});
    REQUIRE((t == 1 || t == 3));
  }
  sampling::Params topp;
  topp.temperature = 1.0f;
  topp.top_p = 0.1f;
  for (int i = 0; i < 100; ++i) REQUIRE(s.sample(m.data(), 4, topp, {}) == 1);
}

TEST_CASE("gated delta rule: the chunked form agrees with the recurrence", "[ref][delta_rule]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  const int64_t dk = 16, dv = 8;
  for (int64_t n : {1, 5, 64, 150}) {
    for (int64_t chunk : {1, 7, 64}) {
      INFO("n " << n << " chunk " << chunk);
      std::vector<float> q(n * dk), k(n * dk), v(n * dv), g(n), beta(n), S0(dk * dv);
      for (auto* vec : {&q, &k, &v, &S0})
        for (auto& x : *vec) x = nd(rng);
      for (int64_t t = 0; t < n; ++t) {  // unit-norm keys and queries, as the layer feeds them
        for (float* p : {&q[t * dk], &k[t * dk]}) {
          float ss = 0;
          for (int64_t i = 0; i < dk; ++i) ss += p[i] * p[i];
          for (int64_t i = 0; i < dk; ++i) p[i] /= std::sqrt(ss);
        }
        g[t] = -2.0f * ud(rng);  // decays in (e^-2, 1]
        beta[t] = ud(rng);
      }
      std::vector<float> Sa = S0, Sb = S0, oa(n * dv), ob(n * dv);
      ref::gated_delta_recurrent(q.data(), k.data(), v.data(), g.data(), beta.data(), n, dk, dv, Sa.data(), oa.data());
      ref::gated_delta_chunked(q.data(), k.data(), v.data(), g.data(), beta.data(), n, dk, dv, chunk, Sb.data(),
                               ob.data());
      auto rel = [](const std::vector<float>& a, const std::vector<float>& b) {
        double num = 0, den = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          num += (a[i] - b[i]) * double(a[i] - b[i]);
          den += double(a[i]) * a[i];
        }
        return std::sqrt(num / den);
      };
      CHECK(rel(oa, ob) < 1e-5);
      CHECK(rel(Sa, Sb) < 1e-5);
    }
  }
}
