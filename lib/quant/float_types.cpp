// F32 / F16 / BF16: one element per "block".
#include <cstring>

#include "lib/core/dtype.h"
#include "lib/quant/formats.h"

namespace bw24::quant {

BW24_DEQUANT(f32) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }
BW24_QUANTIZE(f32) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }

BW24_DEQUANT(f16) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = fp16_to_f32(h);
  }
}
BW24_QUANTIZE(f16) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = f32_to_fp16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

BW24_DEQUANT(bf16) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = bf16_to_f32(h);
  }
}
BW24_QUANTIZE(bf16) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = f32_to_bf16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

}  // namespace bw24::quant
