#include "loaders/common/tensor_directory.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "fmt/format.h"
#include "lib/core/json_text.h"
#include "lib/core/status.h"

namespace bw24::loaders {

std::string_view meta_type_name(MetaType t) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",   "u16",    "i16",   "u32",
                                                "i32", "f32",  "bool",   "string", "array",
                                                "u64", "i64",  "f64"};
  auto i = static_cast<uint32_t>(t);
  return i < std::size(kNames) ? kNames[i] : std::string_view("?");
}

bool MetaValue::is_integer() const {
  switch (type) {
    case MetaType::U8: case MetaType::I8: case MetaType::U16: case MetaType::I16:
    case MetaType::U32: case MetaType::I32: case MetaType::U64: case MetaType::I64:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> MetaValue::as_int() const {
  switch (type) {
    case MetaType::U8: case MetaType::U16: case MetaType::U32: case MetaType::U64:
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(u);
    case MetaType::I8: case MetaType::I16: case MetaType::I32: case MetaType::I64:
      return i;
    default:
      return std::nullopt;
  }
}

std::optional<double> MetaValue::as_number() const {
  if (is_float()) return f;
  if (type == MetaType::U8 || type == MetaType::U16 || type == MetaType::U32 ||
      type == MetaType::U64)
    return static_cast<double>(u);
  if (is_integer()) return static_cast<double>(i);
  return std::nullopt;
}


static void append_text(std::string& out, const MetaValue& v, bool quote_strings) {
  switch (v.type) {
    case MetaType::BOOL: out += v.u ? "true" : "false"; break;
    case MetaType::STRING:
      if (quote_strings) append_json_string(out, v.s);
      else out += v.s;
      break;
    case MetaType::F32: out += fmt::format("{}", static_cast<float>(v.f)); break;
    case MetaType::F64: out += fmt::format("{}", v.f); break;
    case MetaType::ARRAY:
      out += '[';
      for (uint64_t k = 0; k < v.count; ++k) {
        if (k) out += ',';
        if (v.elem_type == MetaType::STRING) append_json_string(out, v.strings[k]);
        else if (v.elem_type == MetaType::ARRAY) append_text(out, v.items[k], true);
        else append_text(out, v.element(k), true);
      }
      out += ']';
      break;
    case MetaType::U8: case MetaType::U16: case MetaType::U32: case MetaType::U64:
      out += std::to_string(v.u);
      break;
    default: out += std::to_string(v.i); break;
  }
}

size_t meta_scalar_size(MetaType t) {
  switch (t) {
    case MetaType::U8: case MetaType::I8: case MetaType::BOOL: return 1;
    case MetaType::U16: case MetaType::I16: return 2;
    case MetaType::U32: case MetaType::I32: case MetaType::F32: return 4;
    case MetaType::U64: case MetaType::I64: case MetaType::F64: return 8;
    default: return 0;
  }
}

MetaValue MetaValue::element(uint64_t k) const {
  MetaValue m;
  m.type = elem_type;
  if (elem_type == MetaType::STRING) {
    m.s = strings[k];
    return m;
  }
  if (elem_type == MetaType::ARRAY) return items[k];
  size_t sz = meta_scalar_size(elem_type);
  const uint8_t* p = raw.data() + k * sz;
  uint64_t bits = 0;
  std::memcpy(&bits, p, sz);  // little-endian host
  switch (elem_type) {
    case MetaType::U8: case MetaType::U16: case MetaType::U32: case MetaType::U64:
    case MetaType::BOOL:
      m.u = bits;
      break;
    case MetaType::I8: m.i = static_cast<int8_t>(bits); break;
    case MetaType::I16: m.i = static_cast<int16_t>(bits); break;
    case MetaType::I32: m.i = static_cast<int32_t>(bits); break;
    case MetaType::I64: m.i = static_cast<int64_t>(bits); break;
    case MetaType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      m.f = f;
      break;
    }
    case MetaType::F64: std::memcpy(&m.f, p, 8); break;
    default: break;
  }
  return m;
}

std::string MetaValue::to_text() const {
  std::string out;
  append_text(out, *this, false);
  return out;
}

MetaValue MetaValue::of_u32(uint32_t v) {
  MetaValue m;
  m.type = MetaType::U32;
  m.u = v;
  return m;
}
MetaValue MetaValue::of_f32(float v) {
  MetaValue m;
  m.type = MetaType::F32;
  m.f = v;
  return m;
}
MetaValue MetaValue::of_bool(bool v) {
  MetaValue m;
  m.type = MetaType::BOOL;
  m.u = v ? 1 : 0;
  return m;
}
MetaValue MetaValue::of_string(std::string v) {
  MetaValue m;
  m.type = MetaType::STRING;
  m.s = std::move(v);
  return m;
}

namespace {
MetaValue packed(MetaType elem, const void* data, size_t count) {
  MetaValue m;
  m.type = MetaType::ARRAY;
  m.elem_type = elem;
  m.count = count;
  m.raw.resize(count * 4);
  if (count) std::memcpy(m.raw.data(), data, m.raw.size());
  return m;
}
}  // namespace

MetaValue MetaValue::of_i32s(const std::vector<int32_t>& v) { return packed(MetaType::I32, v.data(), v.size()); }
MetaValue MetaValue::of_f32s(const std::vector<float>& v) { return packed(MetaType::F32, v.data(), v.size()); }

MetaValue MetaValue::of_strings(std::vector<std::string> v) {
  MetaValue m;
  m.type = MetaType::ARRAY;
  m.elem_type = MetaType::STRING;
  m.count = v.size();
  m.strings = std::move(v);
  return m;
}

std::string TensorInfo::shape_string() const {
  std::vector<int64_t> dims(ne.begin(), ne.begin() + std::max(1, n_dims));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

absl::Status TensorDirectory::add_meta(std::string key, MetaValue value) {
  if (meta_index_.count(key)) return error(Code::kFormat, "duplicate metadata key '{}'", key);
  meta_index_.emplace(key, meta_.size());
  meta_.emplace_back(std::move(key), std::move(value));
  return absl::OkStatus();
}

const MetaValue* TensorDirectory::meta(std::string_view key) const {
  auto it = meta_index_.find(key);
  return it == meta_index_.end() ? nullptr : &meta_[it->second].second;
}

absl::Status TensorDirectory::add_tensor(TensorInfo info) {
  if (tensor_index_.count(info.name)) return error(Code::kFormat, "duplicate tensor '{}'", info.name);
  tensor_index_.emplace(info.name, tensors_.size());
  tensors_.push_back(std::move(info));
  return absl::OkStatus();
}

const TensorInfo* TensorDirectory::tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

uint8_t* TensorDirectory::own_bytes(size_t n) {
  owned_.push_back(std::make_unique<uint8_t[]>(n));
  return owned_.back().get();
}

}  // namespace bw24::loaders
