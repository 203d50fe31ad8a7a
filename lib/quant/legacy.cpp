// 32-element block formats (formats.md §2.3). Shared nibble convention: byte j of qs holds
// element j in its low nibble and element j + 16 in its high nibble.
#include <cmath>
#include <cstring>

#include "lib/core/dtype.h"
#include "lib/quant/formats.h"

namespace bw24::quant {
const int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};
const float kE2m1Values[16] = {0.0f, 0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                               -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

BW24_DEQUANT(q4_0) {  // 18 B: d, qs[16]; x = (nib - 8) * d
  for (int64_t b = 0; b < n / 32; ++b, src += 18, dst += 32) {
    float d = half_at(src);
    const uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = ((qs[j] & 0xF) - 8) * d;
      dst[j + 16] = ((qs[j] >> 4) - 8) * d;
    }
  }
}

BW24_DEQUANT(q4_1) {  // 20 B: d, m, qs[16]; x = nib * d + m
  for (int64_t b = 0; b < n / 32; ++b, src += 20, dst += 32) {
    float d = half_at(src), m = half_at(src + 2);
    const uint8_t* qs = src + 4;
    for (int j = 0; j < 16; ++j) {
      dst[j] = (qs[j] & 0xF) * d + m;
      dst[j + 16] = (qs[j] >> 4) * d + m;
    }
  }
}

BW24_DEQUANT(q5_0) {  // 22 B: d, qh (u32), qs[16]; 5th bit of element j is bit j of qh
  for (int64_t b = 0; b < n / 32; ++b, src += 22, dst += 32) {
    float d = half_at(src);
    uint32_t qh;
    std::memcpy(&qh, src + 2, 4);
    const uint8_t* qs = src + 6;
    for (int j = 0; j < 16; ++j) {
      int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
      dst[j] = (((qs[j] & 0xF) | (h0 << 4)) - 16) * d;
      dst[j + 16] = (((qs[j] >> 4) | (h1 << 4)) - 16) * d;
    }
  }
}

BW24_DEQUANT(q5_1) {  // 24 B: d, m, qh, qs[16]
  for (int64_t b = 0; b < n / 32; ++b, src += 24, dst += 32) {
    float d = half_at(src), m = half_at(src + 2);
    uint32_t qh;
    std::memcpy(&qh, src + 4, 4);
    const uint8_t* qs = src + 8;
    for (int j = 0; j < 16; ++j) {
      int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
      dst[j] = ((qs[j] & 0xF) | (h0 << 4)) * d + m;
      dst[j + 16] = ((qs[j] >> 4) | (h1 << 4)) * d + m;
    }
  }
}

BW24_DEQUANT(q8_0) {  // 34 B: d, int8 qs[32]
  for (int64_t b = 0; b < n / 32; ++b, src += 34, dst += 32) {
    float d = half_at(src);
    const int8_t* qs = reinterpret_cast<const int8_t*>(src + 2);
    for (int j = 0; j < 32; ++j) dst[j] = qs[j] * d;
  }
}

BW24_DEQUANT(iq4_nl) {  // 18 B: d, qs[16]; x = d * T[nib]
  for (int64_t b = 0; b < n / 32; ++b, src += 18, dst += 32) {
    float d = half_at(src);
    const uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * kIq4nlValues[qs[j] & 0xF];
      dst[j + 16] = d * kIq4nlValues[qs[j] >> 4];
    }
  }
}

BW24_DEQUANT(mxfp4) {  // 17 B: E8M0 exponent e, qs[16]; x = E2M1(nib) * 2^(e - 127)
  for (int64_t b = 0; b < n / 32; ++b, src += 17, dst += 32) {
    // Written as (2 * E2M1) * 2^(e - 128) so e = 255 stays finite for the zero code, as in ggml.
    float scale = std::ldexp(1.0f, static_cast<int>(src[0]) - 128);
    const uint8_t* qs = src + 1;
    for (int j = 0; j < 16; ++j) {
      dst[j] = (2.0f * kE2m1Values[qs[j] & 0xF]) * scale;
      dst[j + 16] = (2.0f * kE2m1Values[qs[j] >> 4]) * scale;
    }
  }
}

}  // namespace bw24::quant
