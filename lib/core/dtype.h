// ggml tensor types as GGUF stores them (formats.md §2.1): the id, block size and block bytes.
// This is the layer the loaders need (sizes and bounds); lib/quant adds the arithmetic.
#pragma once

#include <cstdint>
#include <string_view>

namespace bw24 {

enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
};
constexpr uint32_t kGgmlTypeCount = 43;

struct TypeInfo {
  std::string_view name;
  int32_t block_elems;  // elements per block (1 for plain types)
  int32_t block_bytes;  // bytes per block
};

// nullptr for ids that are not (or no longer) ggml types.
const TypeInfo* type_info(uint32_t type);
inline const TypeInfo* type_info(GgmlType t) { return type_info(static_cast<uint32_t>(t)); }
std::string_view type_name(uint32_t type);  // "type#N" for unknown ids is not returned: "?"

// IEEE binary16 and bfloat16 <-> float, exact (round-to-nearest-even on the way down).
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
inline float bf16_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_bf16(float f);

// FP8 E4M3 (the OCP "fn" variant: bias 7, no infinities, 0x7f/0xff NaN, max 448). f32 -> fp8 rounds
// to nearest even and saturates finite values beyond 448 to +-448 (what KV caches want; a plain
// cast in PyTorch turns them into NaN); NaN stays NaN.
float fp8_e4m3_to_f32(uint8_t b);
uint8_t f32_to_fp8_e4m3(float f);

}  // namespace bw24
