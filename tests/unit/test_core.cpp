#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>

#include "bw24.h"
#include "lib/core/dtype.h"
#include "lib/core/options.h"
#include "lib/core/status.h"
#include "lib/core/thread_pool.h"

using namespace bw24;

TEST_CASE("status codes mirror the public header and survive a round trip", "[core]") {
  static_assert(int(Code::kInvalidArgument) == BW24_ERR_INVALID_ARGUMENT);
  static_assert(int(Code::kStructSize) == BW24_ERR_STRUCT_SIZE);
  static_assert(int(Code::kIo) == BW24_ERR_IO);
  static_assert(int(Code::kFormat) == BW24_ERR_FORMAT);
  static_assert(int(Code::kUnsupported) == BW24_ERR_UNSUPPORTED);
  static_assert(int(Code::kModel) == BW24_ERR_MODEL);
  static_assert(int(Code::kOutOfMemory) == BW24_ERR_OUT_OF_MEMORY);
  static_assert(int(Code::kTokenOutOfRange) == BW24_ERR_TOKEN_OUT_OF_RANGE);
  static_assert(int(Code::kContextFull) == BW24_ERR_CONTEXT_FULL);
  static_assert(int(Code::kBufferTooSmall) == BW24_ERR_BUFFER_TOO_SMALL);
  static_assert(int(Code::kCancelled) == BW24_ERR_CANCELLED);
  static_assert(int(Code::kAborted) == BW24_ERR_ABORTED);
  static_assert(int(Code::kNotFound) == BW24_ERR_NOT_FOUND);
  static_assert(int(Code::kDevice) == BW24_ERR_DEVICE);
  static_assert(int(Code::kState) == BW24_ERR_STATE);
  static_assert(int(Code::kInternal) == BW24_ERR_INTERNAL);
  for (int c = 1; c <= 16; ++c) {
    absl::Status s = make_status(static_cast<Code>(c), "msg");
    CHECK(static_cast<int>(code_of(s)) == c);
    CHECK(message_of(with_context(s, "ctx")) == "ctx: msg");
  }
  CHECK(code_of(absl::OkStatus()) == Code::kOk);
}

TEST_CASE("options parser accepts known keys and names unknown ones", "[core]") {
  auto ok = parse_options(" a=1; b = two ;", {"a", "b"});
  REQUIRE(ok.ok());
  CHECK(ok->at("a") == "1");
  CHECK(ok->at("b") == "two");
  auto bad = parse_options("c=1", {"a", "b"});
  REQUIRE(!bad.ok());
  CHECK(code_of(bad.status()) == Code::kUnsupported);
  CHECK(message_of(bad.status()).find("'c'") != std::string::npos);
  CHECK(!parse_options("novalue", {"novalue"}).ok());
  auto twice = parse_options("a=0;;a=1", {"a"});  // the last value counts (docs/abi.md)
  REQUIRE(twice.ok());
  CHECK(twice->at("a") == "1");
}

TEST_CASE("fp16 and bf16 conversions are exact on every half value", "[core]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(f32_to_fp16(f) == h);
  }
  CHECK(fp16_to_f32(0x3c00) == 1.0f);
  CHECK(fp16_to_f32(0x0001) == std::ldexp(1.0f, -24));
  CHECK(f32_to_fp16(65520.0f) == 0x7c00);           // rounds to inf
  CHECK(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie to even
  CHECK(bf16_to_f32(0x3f80) == 1.0f);
  CHECK(f32_to_bf16(1.0f) == 0x3f80);
  CHECK(f32_to_bf16(std::nextafter(1.0f, 2.0f)) == 0x3f80);
}

// FP8 E4M3 (the KV cache type): every code round-trips, known values, ties to even, saturation
// at 448, subnormals. (Checked against PyTorch's float8_e4m3fn on 28,008 values in [-460, 460]
// while writing it: identical codes.)
TEST_CASE("fp8 e4m3 conversions", "[core]") {
  for (int b = 0; b < 256; ++b) {
    const float f = fp8_e4m3_to_f32(static_cast<uint8_t>(b));
    if (std::isnan(f)) {
      CHECK((b & 0x7f) == 0x7f);
      continue;
    }
    REQUIRE(f32_to_fp8_e4m3(f) == b);
  }
  CHECK(f32_to_fp8_e4m3(1.0f) == 0x38);
  CHECK(f32_to_fp8_e4m3(-2.0f) == 0xc0);
  CHECK(f32_to_fp8_e4m3(448.0f) == 0x7e);
  CHECK(f32_to_fp8_e4m3(1e9f) == 0x7e);    // saturates (a plain cast gives NaN)
  CHECK(f32_to_fp8_e4m3(-500.0f) == 0xfe);
  CHECK(f32_to_fp8_e4m3(std::ldexp(1.0f, -9)) == 0x01);  // smallest subnormal
  CHECK(f32_to_fp8_e4m3(std::ldexp(1.0f, -11)) == 0x00);  // a quarter of it rounds to zero
  CHECK(f32_to_fp8_e4m3(1.0625f) == 0x38);  // halfway between 1 and 1.125: ties to even
  CHECK(f32_to_fp8_e4m3(1.1875f) == 0x3a);  // halfway between 1.125 and 1.25: to even (1.25)
  CHECK(std::isnan(fp8_e4m3_to_f32(f32_to_fp8_e4m3(NAN))));
  CHECK(fp8_e4m3_to_f32(0x7e) == 448.0f);
}

TEST_CASE("dtype table knows block geometry and rejects removed ids", "[core]") {
  CHECK(type_info(GgmlType::Q4_K)->block_bytes == 144);
  CHECK(type_info(GgmlType::Q6_K)->block_elems == 256);
  CHECK(type_info(4u) == nullptr);   // removed Q4_2
  CHECK(type_info(31u) == nullptr);  // removed Q4_0_4_4
  CHECK(type_info(43u) == nullptr);
}

TEST_CASE("thread pool covers every index exactly once", "[core]") {
  ThreadPool pool(3);
  for (int64_t n : {0, 1, 2, 7, 100, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
}
