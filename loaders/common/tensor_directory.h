// The canonical form every loader produces: metadata under GGUF key names and tensors under
// GGUF (llama.cpp) tensor names with ggml types and ne-order shapes (ne[0] innermost), each a
// view into a memory-mapped file. Name mapping lives in the loaders; the typed interpretation of
// the metadata lives in lib/arch.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/core/mapped_file.h"

namespace bw24::loaders {

// GGUF metadata value types (formats.md §1.1).
enum class MetaType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8,
  ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view meta_type_name(MetaType t);
size_t meta_scalar_size(MetaType t);  // 0 for STRING / ARRAY / unknown

struct MetaValue {
  MetaType type = MetaType::U32;
  MetaType elem_type = MetaType::U32;  // for arrays
  uint64_t u = 0;                      // unsigned integers and bool
  int64_t i = 0;                       // signed integers
  double f = 0;                        // F32 / F64
  std::string s;                       // STRING
  // ARRAY: `count` elements of elem_type, stored by kind so memory stays within a small factor of
  // the file size whatever the count: scalars packed little-endian in `raw`, strings in `strings`,
  // nested arrays in `items`.
  uint64_t count = 0;
  std::vector<uint8_t> raw;
  std::vector<std::string> strings;
  std::vector<MetaValue> items;

  bool is_integer() const;
  bool is_float() const { return type == MetaType::F32 || type == MetaType::F64; }
  std::optional<int64_t> as_int() const;    // any integer type (u64 above INT64_MAX: nullopt)
  std::optional<double> as_number() const;  // any integer or float type
  std::string to_text() const;              // decimal / true,false / verbatim / JSON array

  // Array element access (scalar arrays); i < count is the caller's job.
  MetaValue element(uint64_t i) const;
  std::optional<int64_t> int_at(uint64_t i) const { return element(i).as_int(); }
  std::optional<double> number_at(uint64_t i) const { return element(i).as_number(); }

  static MetaValue of_u32(uint32_t v);
  static MetaValue of_f32(float v);
  static MetaValue of_bool(bool v);
  static MetaValue of_string(std::string v);
  static MetaValue of_strings(std::vector<std::string> v);  // ARRAY of STRING
  static MetaValue of_i32s(const std::vector<int32_t>& v);   // ARRAY of I32 (packed)
  static MetaValue of_f32s(const std::vector<float>& v);     // ARRAY of F32 (packed)
};

enum class Origin { kGguf, kHuggingFace };

struct TensorInfo {
  std::string name;
  uint32_t type = 0;                  // GgmlType id
  int32_t n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] innermost
  const uint8_t* data = nullptr;
  uint64_t n_bytes = 0;

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::string shape_string() const;  // "[64, 512]" in ne order
};

class TensorDirectory {
 public:
  Origin origin = Origin::kGguf;
  std::string source_path;

  // Metadata in file order, with unique keys.
  absl::Status add_meta(std::string key, MetaValue value);  // duplicate key: kFormat
  const MetaValue* meta(std::string_view key) const;
  const std::vector<std::pair<std::string, MetaValue>>& meta_entries() const { return meta_; }

  absl::Status add_tensor(TensorInfo info);  // duplicate name: kFormat
  const TensorInfo* tensor(std::string_view name) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  // Tensors present in the file in a form this build cannot use (FP8, packed int4, ...): looking
  // them up gives the reason instead of "missing tensor".
  void add_refusal(std::string name, std::string reason) { refused_[std::move(name)] = std::move(reason); }
  const std::string* refusal(std::string_view name) const {
    auto it = refused_.find(name);
    return it == refused_.end() ? nullptr : &it->second;
  }

  void keep_alive(std::unique_ptr<MappedFile> f) { files_.push_back(std::move(f)); }
  // Storage for bytes a loader had to produce itself (none for plain GGUF / safetensors).
  uint8_t* own_bytes(size_t n);

 private:
  std::vector<std::pair<std::string, MetaValue>> meta_;
  std::map<std::string, size_t, std::less<>> meta_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  std::map<std::string, std::string, std::less<>> refused_;
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::vector<std::unique_ptr<uint8_t[]>> owned_;
};

}  // namespace bw24::loaders
