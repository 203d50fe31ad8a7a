// The traits table: one line per format with a reference dequant.
#include "lib/quant/formats.h"
#include "lib/quant/traits.h"

namespace bw24::quant {
namespace {

struct Row {
  GgmlType type;
  DequantRowFn dequant;
  QuantizeRowFn quantize;
};

constexpr Row kRows[] = {
    {GgmlType::F32, dequant_f32, quantize_f32},
    {GgmlType::F16, dequant_f16, quantize_f16},
    {GgmlType::BF16, dequant_bf16, quantize_bf16},
    {GgmlType::Q4_0, dequant_q4_0, quantize_q4_0},
    {GgmlType::Q4_1, dequant_q4_1, quantize_q4_1},
    {GgmlType::Q5_0, dequant_q5_0, quantize_q5_0},
    {GgmlType::Q5_1, dequant_q5_1, quantize_q5_1},
    {GgmlType::Q8_0, dequant_q8_0, quantize_q8_0},
    {GgmlType::IQ4_NL, dequant_iq4_nl, nullptr},
    {GgmlType::MXFP4, dequant_mxfp4, nullptr},
    {GgmlType::Q2_K, dequant_q2_k, nullptr},
    {GgmlType::Q3_K, dequant_q3_k, nullptr},
    {GgmlType::Q4_K, dequant_q4_k, quantize_q4_k},
    {GgmlType::Q5_K, dequant_q5_k, quantize_q5_k},
    {GgmlType::Q6_K, dequant_q6_k, quantize_q6_k},
    {GgmlType::Q8_K, dequant_q8_k, nullptr},
    {GgmlType::IQ4_XS, dequant_iq4_xs, quantize_iq4_xs},
};

struct Table {
  QuantTraits entries[kGgmlTypeCount] = {};
  bool present[kGgmlTypeCount] = {};
  Table() {
    for (const Row& r : kRows) {
      auto id = static_cast<uint32_t>(r.type);
      entries[id] = QuantTraits{r.type, type_info(r.type), r.dequant, r.quantize};
      present[id] = true;
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const QuantTraits* traits(uint32_t type) {
  if (type >= kGgmlTypeCount || !table().present[type]) return nullptr;
  return &table().entries[type];
}

}  // namespace bw24::quant
