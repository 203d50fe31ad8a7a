#include "loaders/gguf/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "lib/core/dtype.h"
#include "lib/core/status.h"

namespace bw24::loaders {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kMaxNameBytes = 63;   // ggml's GGML_MAX_NAME (64) minus the terminator
constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 4;
constexpr uint32_t kDefaultAlignment = 32;

// A cursor over the file image. Each read checks the remaining length first.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  absl::Status read(T* v, const char* what) {
    if (remaining() < sizeof(T))
      return error(Code::kFormat, "GGUF truncated: {} at byte {} needs {} bytes, {} left", what,
                   pos_, sizeof(T), remaining());
    std::memcpy(v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return absl::OkStatus();
  }

  absl::Status read_string(std::string* s, const char* what) {
    uint64_t len = 0;
    size_t at = pos_;
    BW24_RETURN_IF_ERROR(read(&len, what));
    if (len > remaining())
      return error(Code::kFormat, "GGUF {} at byte {}: string length {} exceeds the {} bytes left",
                   what, at, len, remaining());
    s->assign(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return absl::OkStatus();
  }

  absl::Status read_bytes(std::vector<uint8_t>* out, uint64_t n, const char* what) {
    if (n > remaining())
      return error(Code::kFormat, "GGUF {} at byte {}: {} bytes needed, {} left", what, pos_, n,
                   remaining());
    out->assign(data_ + pos_, data_ + pos_ + n);
    pos_ += n;
    return absl::OkStatus();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

bool valid_meta_type(uint32_t t) { return t <= static_cast<uint32_t>(MetaType::F64); }

absl::Status read_value(Reader& r, MetaType type, MetaValue* v, const std::string& key, int depth);

absl::Status read_array(Reader& r, MetaValue* v, const std::string& key, int depth) {
  if (depth >= kMaxArrayDepth)
    return error(Code::kFormat, "GGUF key '{}': arrays nested deeper than {}", key, kMaxArrayDepth);
  uint32_t et = 0;
  uint64_t count = 0;
  size_t at = r.pos();
  BW24_RETURN_IF_ERROR(r.read(&et, "array element type"));
  if (!valid_meta_type(et))
    return error(Code::kFormat, "GGUF key '{}' at byte {}: invalid array element type {}", key, at, et);
  BW24_RETURN_IF_ERROR(r.read(&count, "array length"));
  v->elem_type = static_cast<MetaType>(et);
  // Every element occupies at least this many bytes in the file, so a count the file cannot hold
  // is rejected before anything is allocated.
  size_t min_elem = meta_scalar_size(v->elem_type);
  if (v->elem_type == MetaType::STRING) min_elem = 8;
  if (v->elem_type == MetaType::ARRAY) min_elem = 12;
  if (count > r.remaining() / min_elem)
    return error(Code::kFormat,
                 "GGUF key '{}' at byte {}: array of {} {} elements cannot fit in the {} bytes left",
                 key, at, count, meta_type_name(v->elem_type), r.remaining());
  v->count = count;
  if (v->elem_type == MetaType::STRING) {
    v->strings.resize(count);
    for (uint64_t k = 0; k < count; ++k)
      BW24_RETURN_IF_ERROR(r.read_string(&v->strings[k], "array string"));
  } else if (v->elem_type == MetaType::ARRAY) {
    v->items.resize(count);
    for (uint64_t k = 0; k < count; ++k) {
      v->items[k].type = MetaType::ARRAY;
      BW24_RETURN_IF_ERROR(read_array(r, &v->items[k], key, depth + 1));
    }
  } else {
    BW24_RETURN_IF_ERROR(r.read_bytes(&v->raw, count * min_elem, "array data"));
    if (v->elem_type == MetaType::BOOL)
      for (uint8_t b : v->raw)
        if (b > 1) return error(Code::kFormat, "GGUF key '{}': bool array element is {}", key, b);
  }
  return absl::OkStatus();
}

absl::Status read_value(Reader& r, MetaType type, MetaValue* v, const std::string& key, int depth) {
  v->type = type;
  switch (type) {
    case MetaType::U8: { uint8_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "u8")); v->u = x; break; }
    case MetaType::I8: { int8_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "i8")); v->i = x; break; }
    case MetaType::U16: { uint16_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "u16")); v->u = x; break; }
    case MetaType::I16: { int16_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "i16")); v->i = x; break; }
    case MetaType::U32: { uint32_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "u32")); v->u = x; break; }
    case MetaType::I32: { int32_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "i32")); v->i = x; break; }
    case MetaType::U64: { uint64_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "u64")); v->u = x; break; }
    case MetaType::I64: { int64_t x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "i64")); v->i = x; break; }
    case MetaType::F32: { float x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "f32")); v->f = x; break; }
    case MetaType::F64: { double x = 0; BW24_RETURN_IF_ERROR(r.read(&x, "f64")); v->f = x; break; }
    case MetaType::BOOL: {
      uint8_t x = 0;
      BW24_RETURN_IF_ERROR(r.read(&x, "bool"));
      if (x > 1) return error(Code::kFormat, "GGUF key '{}': bool value is {}", key, x);
      v->u = x;
      break;
    }
    case MetaType::STRING: BW24_RETURN_IF_ERROR(r.read_string(&v->s, "string value")); break;
    case MetaType::ARRAY: BW24_RETURN_IF_ERROR(read_array(r, v, key, depth)); break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status parse_gguf(const uint8_t* data, size_t size, TensorDirectory* out) {
  Reader r(data, size);
  uint32_t magic = 0, version = 0;
  BW24_RETURN_IF_ERROR(r.read(&magic, "magic"));
  if (magic != kMagic) return error(Code::kFormat, "not a GGUF file (magic 0x{:08x})", magic);
  BW24_RETURN_IF_ERROR(r.read(&version, "version"));
  if (version != 2 && version != 3)
    return error(Code::kFormat, "GGUF version {} is not supported (2 and 3 are)", version);
  uint64_t n_tensors = 0, n_kv = 0;
  BW24_RETURN_IF_ERROR(r.read(&n_tensors, "tensor count"));
  BW24_RETURN_IF_ERROR(r.read(&n_kv, "metadata count"));
  // A key/value pair takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least
  // 8 + 4 + 8 + 4 + 8.
  if (n_kv > r.remaining() / 13)
    return error(Code::kFormat, "GGUF metadata count {} cannot fit in a {}-byte file", n_kv, size);
  if (n_tensors > r.remaining() / 32)
    return error(Code::kFormat, "GGUF tensor count {} cannot fit in a {}-byte file", n_tensors, size);

  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key;
    BW24_RETURN_IF_ERROR(r.read_string(&key, "metadata key"));
    uint32_t type = 0;
    size_t at = r.pos();
    BW24_RETURN_IF_ERROR(r.read(&type, "metadata type"));
    if (!valid_meta_type(type))
      return error(Code::kFormat, "GGUF key '{}' at byte {}: invalid value type {}", key, at, type);
    MetaValue v;
    BW24_RETURN_IF_ERROR(read_value(r, static_cast<MetaType>(type), &v, key, 0));
    BW24_RETURN_IF_ERROR(out->add_meta(std::move(key), std::move(v)));
  }

  uint32_t alignment = kDefaultAlignment;
  if (const MetaValue* a = out->meta("general.alignment")) {
    if (a->type != MetaType::U32)
      return error(Code::kFormat, "general.alignment has type {}, expected u32",
                   meta_type_name(a->type));
    if (a->u == 0 || (a->u & (a->u - 1)) != 0)
      return error(Code::kFormat, "general.alignment {} is not a power of two", a->u);
    alignment = static_cast<uint32_t>(a->u);
  }

  struct Pending {
    TensorInfo info;
    uint64_t offset;
  };
  std::vector<Pending> pending;
  pending.reserve(n_tensors);
  for (uint64_t t = 0; t < n_tensors; ++t) {
    Pending p;
    TensorInfo& ti = p.info;
    size_t at = r.pos();
    BW24_RETURN_IF_ERROR(r.read_string(&ti.name, "tensor name"));
    if (ti.name.size() > kMaxNameBytes)
      return error(Code::kFormat, "GGUF tensor name at byte {} is {} bytes long (max {})", at,
                   ti.name.size(), kMaxNameBytes);
    uint32_t n_dims = 0;
    BW24_RETURN_IF_ERROR(r.read(&n_dims, "tensor n_dims"));
    if (n_dims > kMaxDims)
      return error(Code::kFormat, "GGUF tensor '{}' has {} dimensions (max {})", ti.name, n_dims,
                   kMaxDims);
    ti.n_dims = static_cast<int32_t>(n_dims);
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = 0;
      BW24_RETURN_IF_ERROR(r.read(&ne, "tensor dimension"));
      if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return error(Code::kFormat, "GGUF tensor '{}' dimension {} is {}", ti.name, d, ne);
      ti.ne[d] = static_cast<int64_t>(ne);
    }
    BW24_RETURN_IF_ERROR(r.read(&ti.type, "tensor type"));
    const TypeInfo* tinfo = type_info(ti.type);
    if (!tinfo)
      return error(Code::kFormat, "GGUF tensor '{}' has unknown ggml type {}", ti.name, ti.type);
    BW24_RETURN_IF_ERROR(r.read(&p.offset, "tensor offset"));
    // Element count and byte size, each step checked for overflow (the class of bug where a huge
    // ne[] product wrapped around to a small size).
    uint64_t n = 1;
    for (int d = 0; d < 4; ++d) {
      uint64_t ne = static_cast<uint64_t>(ti.ne[d]);
      if (ne != 0 && n > std::numeric_limits<int64_t>::max() / ne)
        return error(Code::kFormat, "GGUF tensor '{}' shape {} overflows", ti.name, ti.shape_string());
      n *= ne;
    }
    if (ti.ne[0] % tinfo->block_elems != 0)
      return error(Code::kFormat, "GGUF tensor '{}' ({}): row length {} is not a multiple of the "
                   "block size {}", ti.name, tinfo->name, ti.ne[0], tinfo->block_elems);
    uint64_t blocks = n / tinfo->block_elems;
    if (blocks > std::numeric_limits<uint64_t>::max() / tinfo->block_bytes)
      return error(Code::kFormat, "GGUF tensor '{}' byte size overflows", ti.name);
    ti.n_bytes = blocks * tinfo->block_bytes;
    if (p.offset % alignment != 0)
      return error(Code::kFormat, "GGUF tensor '{}' offset {} is not a multiple of the alignment {}",
                   ti.name, p.offset, alignment);
    pending.push_back(std::move(p));
  }

  // The data section starts at the next multiple of the alignment (absolute file offset).
  uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
  if (n_tensors > 0 && data_start > size)
    return error(Code::kFormat, "GGUF truncated: data section starts at byte {} past the end ({})",
                 data_start, size);
  uint64_t data_size = n_tensors > 0 ? size - data_start : 0;
  // Tensors must lie inside the data section and must not overlap each other.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (Pending& p : pending) {
    if (p.offset > data_size || p.info.n_bytes > data_size - p.offset)
      return error(Code::kFormat,
                   "GGUF tensor '{}' ({} bytes at data offset {}) ends past the end of the file "
                   "(data section is {} bytes): truncated file?",
                   p.info.name, p.info.n_bytes, p.offset, data_size);
    p.info.data = data + data_start + p.offset;
    ranges.emplace_back(p.offset, p.offset + p.info.n_bytes);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t k = 1; k < ranges.size(); ++k)
    if (ranges[k].first < ranges[k - 1].second)
      return error(Code::kFormat, "GGUF tensors overlap at data offset {}", ranges[k].first);
  for (Pending& p : pending) BW24_RETURN_IF_ERROR(out->add_tensor(std::move(p.info)));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TensorDirectory>> load_gguf(const std::string& path) {
  BW24_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  auto dir = std::make_unique<TensorDirectory>();
  dir->origin = Origin::kGguf;
  dir->source_path = path;
  absl::Status st = parse_gguf(file->data(), file->size(), dir.get());
  if (!st.ok()) return with_context(st, path);
  dir->keep_alive(std::move(file));
  return dir;
}

namespace {
// general.file_type's names, index = the id; "" where llama.cpp retired one (5, 6: Q4_2 / Q4_3; 33-35: Q4_0
// repacks).
constexpr std::string_view kFileTypeNames[] = {
    /*  0 */ "F32", "F16", "Q4_0", "Q4_1", "Q4_1_SOME_F16", "", "", "Q8_0", "Q5_0", "Q5_1",
    /* 10 */ "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ2_XXS",
    /* 20 */ "IQ2_XS", "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ3_M", "IQ2_S", "IQ2_M",
    /* 30 */ "IQ4_XS", "IQ1_M", "BF16", "", "", "", "TQ1_0", "TQ2_0", "MXFP4_MOE"};
constexpr int64_t kFileTypes = sizeof kFileTypeNames / sizeof kFileTypeNames[0];
static_assert(kFileTypes == 39, "ids 0 .. 38 (MXFP4_MOE)");
}  // namespace

std::string_view file_type_name(int64_t file_type) {
  return file_type >= 0 && file_type < kFileTypes ? kFileTypeNames[file_type] : std::string_view{};
}

std::optional<uint32_t> file_type_id(std::string_view name) {
  if (name.empty()) return std::nullopt;  // the retired ids' empty names are no match
  for (int64_t id = 0; id < kFileTypes; ++id)
    if (kFileTypeNames[id] == name) return static_cast<uint32_t>(id);
  return std::nullopt;
}

}  // namespace bw24::loaders
