// Reference dequant/quantize functions of each family file, collected by registry.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "lib/core/dtype.h"

namespace bw24::quant {

// The fp16 at p (block scales are stored unaligned).
inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_f32(h);
}

#define BW24_DEQUANT(name) void dequant_##name(const uint8_t* src, float* dst, int64_t n)
#define BW24_QUANTIZE(name) void quantize_##name(const float* src, uint8_t* dst, int64_t n)

// float_types.cpp
BW24_DEQUANT(f32); BW24_DEQUANT(f16); BW24_DEQUANT(bf16);
BW24_QUANTIZE(f32); BW24_QUANTIZE(f16); BW24_QUANTIZE(bf16);
// legacy.cpp: 32-element blocks
BW24_DEQUANT(q4_0); BW24_DEQUANT(q4_1); BW24_DEQUANT(q5_0); BW24_DEQUANT(q5_1);
BW24_DEQUANT(q8_0); BW24_DEQUANT(iq4_nl); BW24_DEQUANT(mxfp4);
// kquants.cpp: 256-element super-blocks
BW24_DEQUANT(q2_k); BW24_DEQUANT(q3_k); BW24_DEQUANT(q4_k); BW24_DEQUANT(q5_k);
BW24_DEQUANT(q6_k); BW24_DEQUANT(q8_k); BW24_DEQUANT(iq4_xs);
// quantize.cpp
BW24_QUANTIZE(q8_0); BW24_QUANTIZE(q4_0); BW24_QUANTIZE(q4_1); BW24_QUANTIZE(q5_0); BW24_QUANTIZE(q5_1); BW24_QUANTIZE(q4_k);
BW24_QUANTIZE(q5_k); BW24_QUANTIZE(iq4_xs);
BW24_QUANTIZE(q6_k);

// Shared tables.
extern const int8_t kIq4nlValues[16];     // IQ4_NL / IQ4_XS non-linear levels
extern const float kE2m1Values[16];       // FP4 E2M1 code -> value

// K-quant 6-bit scale/min pairs packed in 12 bytes (formats.md §2.5 get_scale_min_k4).
inline void get_scale_min_k4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

}  // namespace bw24::quant
