#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "lib/core/dtype.h"
#include "lib/quant/repack.h"
#include "lib/quant/traits.h"
#include "nlohmann/json.hpp"

using namespace bw24;
using nlohmann::json;

namespace {
json vectors() {
  std::ifstream f(BW24_TEST_DATA_DIR "/quant/vectors.json");
  REQUIRE(f.good());
  return json::parse(f);
}
std::vector<uint8_t> unhex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return out;
}
}  // namespace

TEST_CASE("block sizes agree with the gguf package", "[quant]") {
  json v = vectors();
  for (auto& [name, s] : v["sizes"].items()) {
    if (name == "Q8_1") continue;  // the package still lists the old 40-byte layout; ggml's is 36
    const TypeInfo* t = type_info(s["id"].get<uint32_t>());
    INFO(name);
    REQUIRE(t != nullptr);
    CHECK(std::string(t->name) == name);
    CHECK(t->block_elems == s["block_elems"].get<int>());
    CHECK(t->block_bytes == s["block_bytes"].get<int>());
  }
}

TEST_CASE("reference dequant matches the gguf package bit for bit", "[quant]") {
  json v = vectors();
  int checked = 0;
  for (auto& c : v["dequant"]) {
    std::string name = c["type"];
    INFO(name);
    const quant::QuantTraits* q = quant::traits(c["id"].get<uint32_t>());
    REQUIRE(q != nullptr);
    auto raw = unhex(c["hex"]);
    int64_t n = c["n"];
    REQUIRE(raw.size() == quant::row_bytes(*q->info, n));
    std::vector<float> out(static_cast<size_t>(n), NAN);
    q->dequant(raw.data(), out.data(), n);
    auto& exp = c["expected"];
    for (int64_t i = 0; i < n; ++i) {
      float e = exp[static_cast<size_t>(i)].get<float>();
      // The package computes in float32 like ggml; allow one ulp for operation order.
      REQUIRE(std::fabs(out[i] - e) <= 1e-6f * std::max(1.0f, std::fabs(e)));
    }
    ++checked;
  }
  CHECK(checked == 16);
}

TEST_CASE("reference quantize of Q8_0 / Q4_0 / F16 / BF16 matches the gguf package bytes", "[quant]") {
  json v = vectors();
  for (auto& c : v["quantize"]) {
    std::string name = c["type"];
    INFO(name);
    const quant::QuantTraits* q = quant::traits(c["id"].get<uint32_t>());
    REQUIRE(q->quantize != nullptr);
    std::vector<float> x = c["input"].get<std::vector<float>>();
    auto expected = unhex(c["hex"]);
    std::vector<uint8_t> out(quant::row_bytes(*q->info, static_cast<int64_t>(x.size())));
    q->quantize(x.data(), out.data(), static_cast<int64_t>(x.size()));
    CHECK(out == expected);
  }
}

TEST_CASE("every quantizer round-trips within its format's error bound", "[quant]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t n = 1024;
  std::vector<float> x(n);
  for (auto& e : x) e = nd(rng);
  // Bound on RMS error relative to RMS of x, from the format's bits (loose, catches packing bugs).
  struct Case { GgmlType t; double bound; };
  for (Case c : {Case{GgmlType::Q8_0, 0.01}, Case{GgmlType::Q4_0, 0.15}, Case{GgmlType::Q4_1, 0.15},
                 Case{GgmlType::Q5_0, 0.08}, Case{GgmlType::Q5_1, 0.08}, Case{GgmlType::Q4_K, 0.15},
                 Case{GgmlType::Q5_K, 0.08}, Case{GgmlType::Q6_K, 0.04}, Case{GgmlType::IQ4_XS, 0.15},
                 Case{GgmlType::F16, 1e-3},
                 Case{GgmlType::BF16, 8e-3}}) {
    const quant::QuantTraits* q = quant::traits(c.t);
    INFO(q->info->name);
    std::vector<uint8_t> blob(quant::row_bytes(*q->info, n));
    std::vector<float> y(n);
    q->quantize(x.data(), blob.data(), n);
    q->dequant(blob.data(), y.data(), n);
    double se = 0, sx = 0;
    for (int64_t i = 0; i < n; ++i) {
      se += (x[i] - y[i]) * double(x[i] - y[i]);
      sx += x[i] * double(x[i]);
    }
    CHECK(std::sqrt(se / sx) < c.bound);
  }
}

TEST_CASE("types without a reference dequant report none", "[quant]") {
  CHECK(quant::traits(GgmlType::IQ2_XXS) == nullptr);
  CHECK(quant::traits(GgmlType::NVFP4) == nullptr);
  CHECK(quant::traits(99u) == nullptr);
}

TEST_CASE("plane repack is a bijection that covers every byte of a block", "[quant][repack]") {
  std::mt19937 rng(5);
  for (uint32_t type : {2u, 3u, 6u, 7u, 8u, 14u, 23u}) {
    const quant::PlaneLayout* l = quant::plane_layout(type);
    REQUIRE(l != nullptr);
    INFO(type_info(type)->name);
    CHECK(l->block_bytes == type_info(type)->block_bytes);
    std::vector<int> covered(l->block_bytes, 0);
    for (const quant::PlaneField& f : l->fields)
      for (int i = 0; i < f.bytes; ++i) ++covered.at(f.offset + i);
    for (int c : covered) CHECK(c == 1);
    for (int64_t n : {1, 3, 64}) {
      std::vector<uint8_t> file(size_t(n) * l->block_bytes), planes(file.size()), back(file.size());
      for (auto& b : file) b = static_cast<uint8_t>(rng());
      quant::to_planes(*l, file.data(), n, planes.data());
      quant::from_planes(*l, planes.data(), n, back.data());
      CHECK(back == file);
      // Block b's first field lies at b * field bytes in the first plane.
      const quant::PlaneField& f0 = l->fields[0];
      CHECK(std::memcmp(planes.data() + (n - 1) * f0.bytes, file.data() + (n - 1) * l->block_bytes + f0.offset,
                        f0.bytes) == 0);
    }
  }
  // Planes cut by tiles (the device's Q6_K, a tile per row piece): each tile is the planes of its
  // blocks, and the round trip holds.
  {
    const quant::PlaneLayout* l = quant::plane_layout(14);
    const int64_t n = 48, tile = 16;
    std::vector<uint8_t> file(size_t(n) * l->block_bytes), planes(file.size()), one(size_t(tile) * l->block_bytes),
        back(file.size());
    for (auto& b : file) b = static_cast<uint8_t>(rng());
    quant::to_planes(*l, file.data(), n, planes.data(), tile);
    quant::from_planes(*l, planes.data(), n, back.data(), tile);
    CHECK(back == file);
    quant::to_planes(*l, file.data() + 2 * one.size(), tile, one.data());  // the third tile alone
    CHECK(std::memcmp(planes.data() + 2 * one.size(), one.data(), one.size()) == 0);
  }
  CHECK(quant::plane_layout(12) == nullptr);  // Q4_K: 144-byte blocks stay as they are
  CHECK(quant::plane_layout(13) == nullptr);  // Q5_K: 176-byte blocks too
}
