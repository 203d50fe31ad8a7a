#include "lib/arch/config.h"

#include <limits>

#include "lib/core/status.h"

namespace bw24::arch {

using loaders::MetaType;
using loaders::MetaValue;

bool MetaReader::has(std::string_view key) const { return dir_.meta(full(key)) != nullptr; }

absl::StatusOr<int32_t> MetaReader::u32(std::string_view key) const {
  std::string k = full(key);
  const MetaValue* v = dir_.meta(k);
  if (!v) return error(Code::kModel, "missing hyper-parameter '{}'", k);
  // Some keys may be per-layer arrays; a uniform array is accepted as its value.
  if (v->type == MetaType::ARRAY && v->count > 0 && v->elem_type != MetaType::STRING &&
      v->elem_type != MetaType::ARRAY) {
    auto first = v->int_at(0);
    for (uint64_t i = 1; first && i < v->count; ++i)
      if (v->int_at(i) != first)
        return error(Code::kUnsupported, "'{}' varies per layer, which this arch does not support", k);
    if (first && *first >= 0 && *first <= std::numeric_limits<int32_t>::max()) return static_cast<int32_t>(*first);
  }
  auto i = v->as_int();
  if (!i || *i < 0 || *i > std::numeric_limits<int32_t>::max())
    return error(Code::kModel, "hyper-parameter '{}' = {} is not a non-negative 32-bit integer", k,
                 v->to_text());
  return static_cast<int32_t>(*i);
}

absl::StatusOr<int32_t> MetaReader::u32_or(std::string_view key, int32_t fallback) const {
  if (!has(key)) return fallback;
  return u32(key);
}

absl::StatusOr<float> MetaReader::f32_or(std::string_view key, float fallback) const {
  std::string k = full(key);
  const MetaValue* v = dir_.meta(k);
  if (!v) return fallback;
  auto d = v->as_number();
  if (!d) return error(Code::kModel, "hyper-parameter '{}' is not a number", k);
  return static_cast<float>(*d);
}

absl::StatusOr<bool> MetaReader::bool_or(std::string_view key, bool fallback) const {
  std::string k = full(key);
  const MetaValue* v = dir_.meta(k);
  if (!v) return fallback;
  if (v->type != MetaType::BOOL) return error(Code::kModel, "hyper-parameter '{}' is not a bool", k);
  return v->u != 0;
}

std::string MetaReader::str_or(std::string_view key, std::string fallback) const {
  const MetaValue* v = dir_.meta(key);
  return v && v->type == MetaType::STRING ? v->s : fallback;
}

}  // namespace bw24::arch
