#include "loaders/safetensors/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "lib/core/status.h"
#include "nlohmann/json.hpp"

namespace bw24::loaders {

using nlohmann::json;

size_t safetensors_dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" ||
      d == "F8_E8M0")
    return 1;
  return 0;
}

namespace {
constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit

absl::StatusOr<SafetensorsEntry> parse_entry(const std::string& name, const json& e,
                                              const uint8_t* base, uint64_t data_size) {
  if (!e.is_object()) return error(Code::kFormat, "safetensors entry '{}' is not an object", name);
  auto dt = e.find("dtype");
  auto sh = e.find("shape");
  auto off = e.find("data_offsets");
  if (dt == e.end() || !dt->is_string())
    return error(Code::kFormat, "safetensors tensor '{}' has no dtype string", name);
  if (sh == e.end() || !sh->is_array())
    return error(Code::kFormat, "safetensors tensor '{}' has no shape array", name);
  if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    return error(Code::kFormat, "safetensors tensor '{}' data_offsets is not [begin, end]", name);
  SafetensorsEntry out;
  out.name = name;
  out.dtype = dt->get<std::string>();
  size_t esize = safetensors_dtype_size(out.dtype);
  if (esize == 0)
    return error(Code::kFormat, "safetensors tensor '{}' has unknown dtype '{}'", name, out.dtype);
  if (sh->size() > 8) return error(Code::kFormat, "safetensors tensor '{}' has {} dimensions", name, sh->size());
  uint64_t n = 1;
  for (const json& d : *sh) {
    if (!d.is_number_unsigned())
      return error(Code::kFormat, "safetensors tensor '{}' has a dimension that is not a "
                   "non-negative integer", name);
    uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (v != 0 && n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / v))
      return error(Code::kFormat, "safetensors tensor '{}' shape overflows", name);
    n *= v;
    out.shape.push_back(static_cast<int64_t>(v));
  }
  uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
  if (begin > end || end > data_size)
    return error(Code::kFormat, "safetensors tensor '{}' data [{}, {}) lies outside the {}-byte "
                 "data section: truncated file?", name, begin, end, data_size);
  if (n > std::numeric_limits<uint64_t>::max() / esize || end - begin != n * esize)
    return error(Code::kFormat, "safetensors tensor '{}' holds {} bytes but its shape and dtype "
                 "need {}", name, end - begin, n * esize);
  out.data = base + begin;
  out.n_bytes = end - begin;
  return out;
}
}  // namespace

absl::StatusOr<std::vector<SafetensorsEntry>> parse_safetensors(const uint8_t* data, size_t size) {
  if (size < 8) return error(Code::kFormat, "safetensors file is {} bytes, too short", size);
  uint64_t header_len;
  std::memcpy(&header_len, data, 8);
  if (header_len > size - 8 || header_len > kMaxHeaderBytes)
    return error(Code::kFormat, "safetensors header length {} does not fit the {}-byte file",
                 header_len, size);
  const char* hb = reinterpret_cast<const char*>(data + 8);
  json header = json::parse(hb, hb + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return error(Code::kFormat, "safetensors header is not a JSON object");
  const uint8_t* base = data + 8 + header_len;
  uint64_t data_size = size - 8 - header_len;
  std::vector<SafetensorsEntry> out;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      BW24_ASSIGN_OR_RETURN(SafetensorsEntry e, parse_entry(it.key(), it.value(), base, data_size));
      out.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return error(Code::kFormat, "safetensors header: {}", e.what());
  }
  std::vector<std::pair<const uint8_t*, const uint8_t*>> ranges;
  for (const auto& e : out)
    if (e.n_bytes) ranges.emplace_back(e.data, e.data + e.n_bytes);
  std::sort(ranges.begin(), ranges.end());
  for (size_t k = 1; k < ranges.size(); ++k)
    if (ranges[k].first < ranges[k - 1].second)
      return error(Code::kFormat, "safetensors tensors overlap at data offset {}",
                   ranges[k].first - base);
  return out;
}

}  // namespace bw24::loaders
