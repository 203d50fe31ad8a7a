// Reference quantizers. Q8_0 and Q4_0 follow ggml's reference rounding exactly (tests compare
// bytes with the gguf package). The K-quant quantizers are our own simple min/max fits: valid
// blocks that any reader decodes identically, not llama.cpp's error-minimizing search.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "lib/core/dtype.h"
#include "lib/quant/formats.h"

namespace bw24::quant {
namespace {

inline void put_half(uint8_t* p, float v) {
  uint16_t h = f32_to_fp16(v);
  std::memcpy(p, &h, 2);
}
inline float half_round(float v) { return fp16_to_f32(f32_to_fp16(v)); }
inline int nearest(float v) { return static_cast<int>(std::lround(v)); }
// The element of x[0, n) with the largest magnitude, sign kept (the first of equals).
inline float signed_absmax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

// Min/max fit of a block of 32 for the formats that store x ~= q d + lo with q in [0, qmax] (Q4_1,
// Q5_1): lo, d = (hi - lo) / qmax and its inverse; level() rounds an element to its q.
struct RangeFit {
  float lo, d, id;
  RangeFit(const float* x, int qmax) {
    const auto [mn, mx] = std::minmax_element(x, x + 32);
    lo = *mn;
    d = (*mx - *mn) / static_cast<float>(qmax);
    id = d != 0 ? 1.0f / d : 0.0f;
  }
  int level(float x, int qmax) const { return std::min(qmax, static_cast<int>((x - lo) * id + 0.5f)); }
};

// Fit x ~= d * sc_j * q - dmin * m_j over 8 sub-blocks of 32 with q in [0, qmax]; writes d, dmin,
// the 12 packed scale bytes and the per-element q.
void fit_k_block(const float* x, int qmax, uint8_t* head /* d, dmin, scales[12] */, uint8_t* q) {
  float scale[8], minv[8];
  for (int j = 0; j < 8; ++j) {
    const float* s = x + 32 * j;
    float lo = std::min(0.0f, *std::min_element(s, s + 32));
    float hi = *std::max_element(s, s + 32);
    scale[j] = (hi - lo) / qmax;
    minv[j] = -lo;  // >= 0
  }
  float max_scale = *std::max_element(scale, scale + 8);
  float max_min = *std::max_element(minv, minv + 8);
  float d = half_round(max_scale / 63.0f), dmin = half_round(max_min / 63.0f);
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>(d > 0 ? std::clamp(nearest(scale[j] / d), 0, 63) : 0);
    m[j] = static_cast<uint8_t>(dmin > 0 ? std::clamp(nearest(minv[j] / dmin), 0, 63) : 0);
  }
  put_half(head, d);
  put_half(head + 2, dmin);
  uint8_t* s = head + 4;
  for (int k = 0; k < 4; ++k) {
    s[k] = static_cast<uint8_t>(sc[k] | ((sc[k + 4] >> 4) << 6));
    s[k + 4] = static_cast<uint8_t>(m[k] | ((m[k + 4] >> 4) << 6));
    s[k + 8] = static_cast<uint8_t>((sc[k + 4] & 0xF) | ((m[k + 4] & 0xF) << 4));
  }
  for (int j = 0; j < 8; ++j) {
    float dl = d * sc[j], ml = dmin * m[j];
    for (int l = 0; l < 32; ++l)
      q[32 * j + l] = static_cast<uint8_t>(dl > 0 ? std::clamp(nearest((x[32 * j + l] + ml) / dl), 0, qmax) : 0);
  }
}

}  // namespace

BW24_QUANTIZE(q8_0) {
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 34) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(src[j]));
    float d = amax / 127.0f;
    float id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    for (int j = 0; j < 32; ++j) dst[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(src[j] * id)));
  }
}

BW24_QUANTIZE(q4_0) {
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 18) {
    float d = signed_absmax(src, 32) / -8.0f;
    float id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    for (int j = 0; j < 16; ++j) {
      int q0 = std::min(15, static_cast<int>(src[j] * id + 8.5f));
      int q1 = std::min(15, static_cast<int>(src[j + 16] * id + 8.5f));
      dst[2 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

BW24_QUANTIZE(q4_1) {  // min/max fit: x ~= q * d + m, q in [0, 15]
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 20) {
    const RangeFit f(src, 15);
    put_half(dst, f.d);
    put_half(dst + 2, f.lo);
    for (int j = 0; j < 16; ++j) {
      const int q0 = f.level(src[j], 15), q1 = f.level(src[j + 16], 15);
      dst[4 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

BW24_QUANTIZE(q5_1) {  // as Q4_1 with 32 levels: x ~= q * d + m, q in [0, 31], 5th bits in qh
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 24) {
    const RangeFit f(src, 31);
    put_half(dst, f.d);
    put_half(dst + 2, f.lo);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      const int q0 = f.level(src[j], 31), q1 = f.level(src[j + 16], 31);
      dst[8 + j] = static_cast<uint8_t>((q0 & 0xF) | ((q1 & 0xF) << 4));
      qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
    }
    std::memcpy(dst + 4, &qh, 4);
  }
}

BW24_QUANTIZE(q5_0) {  // as Q4_0 with 32 levels: d = max / -16, 5th bits in qh
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 22) {
    const float d = signed_absmax(src, 32) / -16.0f, id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      int q0 = std::min(31, static_cast<int>(src[j] * id + 16.5f));
      int q1 = std::min(31, static_cast<int>(src[j + 16] * id + 16.5f));
      dst[6 + j] = static_cast<uint8_t>((q0 & 0xF) | ((q1 & 0xF) << 4));
      qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
    }
    std::memcpy(dst + 2, &qh, 4);
  }
}

BW24_QUANTIZE(q4_k) {
  for (int64_t b = 0; b < n / 256; ++b, src += 256, dst += 144) {
    uint8_t q[256];
    fit_k_block(src, 15, dst, q);
    uint8_t* qs = dst + 16;
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l)
        qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
  }
}

BW24_QUANTIZE(q5_k) {
  for (int64_t b = 0; b < n / 256; ++b, src += 256, dst += 176) {
    uint8_t q[256];
    fit_k_block(src, 31, dst, q);
    uint8_t* qh = dst + 16;
    uint8_t* ql = dst + 48;
    std::memset(qh, 0, 32);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        uint8_t lo = q[64 * c + l], hi = q[64 * c + 32 + l];
        ql[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
        if (lo & 16) qh[l] |= static_cast<uint8_t>(1u << (2 * c));
        if (hi & 16) qh[l] |= static_cast<uint8_t>(2u << (2 * c));
      }
  }
}

// IQ4_XS (136 B: d, scales_h, scales_l[4], qs[128]): per sub-block of 32 a scale that puts the
// largest-magnitude element on the codebook's end (-127), the 8 scales as 6-bit multiples (ls - 32)
// of the block's d, each element to its nearest codebook level. Not llama.cpp's searched fit; a
// valid encoding for kernels and round trips.
BW24_QUANTIZE(iq4_xs) {
  for (int64_t b = 0; b < n / 256; ++b, src += 256, dst += 136) {
    float sub[8], smax = 0;
    for (int ib = 0; ib < 8; ++ib) {
      sub[ib] = signed_absmax(src + 32 * ib, 32) / static_cast<float>(kIq4nlValues[0]);
      smax = std::max(smax, std::fabs(sub[ib]));
    }
    const float d = half_round(smax / 31.0f), id = d != 0 ? 1.0f / d : 0.0f;
    put_half(dst, d);
    uint16_t scales_h = 0;
    uint8_t* scales_l = dst + 4;
    std::memset(scales_l, 0, 4);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = std::clamp(nearest(sub[ib] * id) + 32, 0, 63);
      scales_l[ib / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (ib % 2)));
      scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * ib));
      const float dl = d * static_cast<float>(ls - 32), idl = dl != 0 ? 1.0f / dl : 0.0f;
      uint8_t idx[32];
      for (int j = 0; j < 32; ++j) {
        const float v = src[32 * ib + j] * idl;
        int best = 0;
        for (int k = 1; k < 16; ++k)
          if (std::fabs(v - kIq4nlValues[k]) < std::fabs(v - kIq4nlValues[best])) best = k;
        idx[j] = static_cast<uint8_t>(best);
      }
      for (int j = 0; j < 16; ++j) dst[8 + 16 * ib + j] = static_cast<uint8_t>(idx[j] | (idx[j + 16] << 4));
    }
    std::memcpy(dst + 2, &scales_h, 2);
  }
}

BW24_QUANTIZE(q6_k) {
  for (int64_t b = 0; b < n / 256; ++b, src += 256, dst += 210) {
    // 16 sub-blocks of 16: signed 6-bit q in [-32, 31], int8 sub-scale, fp16 super-scale.
    float sub[16];
    for (int j = 0; j < 16; ++j) sub[j] = signed_absmax(src + 16 * j, 16) / -32.0f;
    float amax = 0;
    for (float s : sub) amax = std::max(amax, std::fabs(s));
    float d = half_round(amax / 127.0f);
    int8_t sc[16];
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(d > 0 ? std::clamp(nearest(sub[j] / d), -127, 127) : 0);
    uint8_t q[256];
    for (int j = 0; j < 16; ++j) {
      float dl = d * sc[j];
      for (int l = 0; l < 16; ++l)
        q[16 * j + l] = static_cast<uint8_t>(
            (dl != 0 ? std::clamp(nearest(src[16 * j + l] / dl), -32, 31) : 0) + 32);
    }
    uint8_t* ql = dst;
    uint8_t* qh = dst + 128;
    std::memcpy(dst + 192, sc, 16);
    put_half(dst + 208, d);
    for (int half = 0; half < 2; ++half) {
      uint8_t* l8 = ql + 64 * half;
      uint8_t* h8 = qh + 32 * half;
      const uint8_t* v = q + 128 * half;
      for (int l = 0; l < 32; ++l) {
        uint8_t q1 = v[l], q2 = v[l + 32], q3 = v[l + 64], q4 = v[l + 96];
        l8[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        l8[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        h8[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

}  // namespace bw24::quant
