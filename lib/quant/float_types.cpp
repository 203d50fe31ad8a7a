// F32 / F16 / BF16: one element per "block".
#include <cstring>

#include "lib/core/dtype.h"
#include "lib/quant/formats.h"

namespace bw24::quant {

BW24_DEQUANT(f32) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }
BW24_QUANTIZE(f32) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }

namespace {
// F16 and BF16 elements: 2 bytes each, through the format's own conversion (lib/core/dtype.h).
template <float (*kToF32)(uint16_t)>
void widen(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = kToF32(h);
  }
}
template <uint16_t (*kFromF32)(float)>
void narrow(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = kFromF32(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}
}  // namespace

BW24_DEQUANT(f16) { widen<fp16_to_f32>(src, dst, n); }
BW24_QUANTIZE(f16) { narrow<f32_to_fp16>(src, dst, n); }
BW24_DEQUANT(bf16) { widen<bf16_to_f32>(src, dst, n); }
BW24_QUANTIZE(bf16) { narrow<f32_to_bf16>(src, dst, n); }

}  // namespace bw24::quant
