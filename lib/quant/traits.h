// One traits record per ggml type: block geometry (from lib/core/dtype), the reference dequant to
// f32 and, where we have one, the reference quantize from f32. Adding a format = one function
// pair in its family file + one line in registry.cpp (docs/adding-a-quant-format.md).
#pragma once

#include <cstdint>

#include "lib/core/dtype.h"

namespace bw24::quant {

// n is a multiple of the block size; src holds n / block_elems blocks.
using DequantRowFn = void (*)(const uint8_t* src, float* dst, int64_t n);
using QuantizeRowFn = void (*)(const float* src, uint8_t* dst, int64_t n);

struct QuantTraits {
  GgmlType type;
  const TypeInfo* info;
  DequantRowFn dequant;    // never null in the table
  QuantizeRowFn quantize;  // null: no reference quantizer for this type
};

// nullptr for types without a reference dequant (I-quants other than IQ4_*, ternary, NVFP4...).
const QuantTraits* traits(uint32_t type);
inline const QuantTraits* traits(GgmlType t) { return traits(static_cast<uint32_t>(t)); }

// Bytes of a row of n elements (n a multiple of the block size).
inline uint64_t row_bytes(const TypeInfo& t, int64_t n) {
  return static_cast<uint64_t>(n / t.block_elems) * t.block_bytes;
}

}  // namespace bw24::quant
