// 256-element super-block formats (formats.md §2.5).
#include <cstring>

#include "lib/core/dtype.h"
#include "lib/quant/formats.h"

namespace bw24::quant {
BW24_DEQUANT(q2_k) {  // 84 B: scales[16], qs[64], d, dmin
  for (int64_t b = 0; b < n / 256; ++b, src += 84) {
    const uint8_t* scales = src;
    const uint8_t* qs = src + 16;
    float d = half_at(src + 80), dmin = half_at(src + 82);
    int is = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          uint8_t sc = scales[is++];
          float dl = d * (sc & 0xF), ml = dmin * (sc >> 4);
          for (int l = 0; l < 16; ++l) *dst++ = dl * ((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}

BW24_DEQUANT(q3_k) {  // 110 B: hmask[32], qs[64], scales[12], d
  constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  for (int64_t b = 0; b < n / 256; ++b, src += 110) {
    const uint8_t* hm = src;
    const uint8_t* qs = src + 32;
    float d = half_at(src + 108);
    uint32_t aux[4];
    std::memcpy(aux, src + 96, 12);
    uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    int8_t scales[16];
    std::memcpy(scales, aux, 16);
    int is = 0;
    uint8_t m = 1;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
        for (int part = 0; part < 2; ++part) {
          float dl = d * (scales[is++] - 32);
          for (int l = 0; l < 16; ++l) {
            int k = l + 16 * part;
            *dst++ = dl * (((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4));
          }
        }
      }
    }
  }
}

BW24_DEQUANT(q4_k) {  // 144 B: d, dmin, scales[12], qs[128]
  for (int64_t b = 0; b < n / 256; ++b, src += 144) {
    float d = half_at(src), dmin = half_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* q = src + 16;
    for (int c = 0; c < 4; ++c, q += 32) {
      uint8_t sc, m;
      get_scale_min_k4(2 * c, scales, &sc, &m);
      float d1 = d * sc, m1 = dmin * m;
      get_scale_min_k4(2 * c + 1, scales, &sc, &m);
      float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *dst++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

BW24_DEQUANT(q5_k) {  // 176 B: d, dmin, scales[12], qh[32], qs[128]
  for (int64_t b = 0; b < n / 256; ++b, src += 176) {
    float d = half_at(src), dmin = half_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qh = src + 16;
    const uint8_t* ql = src + 48;
    for (int c = 0; c < 4; ++c, ql += 32) {
      uint8_t sc, m;
      get_scale_min_k4(2 * c, scales, &sc, &m);
      float d1 = d * sc, m1 = dmin * m;
      get_scale_min_k4(2 * c + 1, scales, &sc, &m);
      float d2 = d * sc, m2 = dmin * m;
      uint8_t u1 = static_cast<uint8_t>(1u << (2 * c)), u2 = static_cast<uint8_t>(2u << (2 * c));
      for (int l = 0; l < 32; ++l) *dst++ = d1 * ((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * ((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    }
  }
}

BW24_DEQUANT(q6_k) {  // 210 B: ql[128], qh[64], int8 scales[16], d
  for (int64_t b = 0; b < n / 256; ++b, src += 210, dst += 256) {
    float d = half_at(src + 208);
    const int8_t* sc = reinterpret_cast<const int8_t*>(src + 192);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = src + 64 * half;
      const uint8_t* qh = src + 128 + 32 * half;
      const int8_t* s = sc + 8 * half;
      float* y = dst + 128 * half;
      for (int l = 0; l < 32; ++l) {
        int is = l / 16;
        int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * s[is + 0] * q1;
        y[l + 32] = d * s[is + 2] * q2;
        y[l + 64] = d * s[is + 4] * q3;
        y[l + 96] = d * s[is + 6] * q4;
      }
    }
  }
}

BW24_DEQUANT(q8_k) {  // 292 B: f32 d, int8 qs[256], int16 bsums[16]
  for (int64_t b = 0; b < n / 256; ++b, src += 292) {
    float d;
    std::memcpy(&d, src, 4);
    const int8_t* qs = reinterpret_cast<const int8_t*>(src + 4);
    for (int j = 0; j < 256; ++j) *dst++ = d * qs[j];
  }
}

BW24_DEQUANT(iq4_xs) {  // 136 B: d, scales_h (u16), scales_l[4], qs[128]
  for (int64_t b = 0; b < n / 256; ++b, src += 136) {
    float d = half_at(src);
    uint16_t scales_h;
    std::memcpy(&scales_h, src + 2, 2);
    const uint8_t* scales_l = src + 4;
    const uint8_t* qs = src + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16, dst += 32) {
      int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
      float dl = d * (ls - 32);
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * kIq4nlValues[qs[j] & 0xF];
        dst[j + 16] = dl * kIq4nlValues[qs[j] >> 4];
      }
    }
  }
}

}  // namespace bw24::quant
