#include "loaders/gguf/gguf_write.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "lib/core/status.h"

namespace bw24::loaders {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian

class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) {}
  template <typename T>
  void put(T v) {
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    put(uint64_t(s.size()));
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) {
    if (ok_ && n && std::fwrite(p, 1, n, f_) != n) ok_ = false;
    pos_ += n;
  }
  void pad_to(uint64_t align) {
    static const uint8_t zeros[64] = {};
    while (pos_ % align) bytes(zeros, std::min<uint64_t>(align - pos_ % align, sizeof zeros));
  }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  uint64_t pos_ = 0;
  bool ok_ = true;
};

void put_value(Out& o, const MetaValue& v, MetaType type) {
  switch (type) {
    case MetaType::U8: o.put(uint8_t(v.u)); break;
    case MetaType::I8: o.put(int8_t(v.i)); break;
    case MetaType::U16: o.put(uint16_t(v.u)); break;
    case MetaType::I16: o.put(int16_t(v.i)); break;
    case MetaType::U32: o.put(uint32_t(v.u)); break;
    case MetaType::I32: o.put(int32_t(v.i)); break;
    case MetaType::F32: o.put(float(v.f)); break;
    case MetaType::BOOL: o.put(uint8_t(v.u ? 1 : 0)); break;
    case MetaType::STRING: o.str(v.s); break;
    case MetaType::U64: o.put(uint64_t(v.u)); break;
    case MetaType::I64: o.put(int64_t(v.i)); break;
    case MetaType::F64: o.put(double(v.f)); break;
    case MetaType::ARRAY:
      o.put(uint32_t(v.elem_type));
      o.put(uint64_t(v.count));
      if (v.elem_type == MetaType::STRING) {
        for (const std::string& s : v.strings) o.str(s);
      } else if (v.elem_type == MetaType::ARRAY) {
        for (const MetaValue& item : v.items) put_value(o, item, MetaType::ARRAY);
      } else {
        o.bytes(v.raw.data(), v.raw.size());  // scalars are kept packed little-endian
      }
      break;
  }
}

}  // namespace

absl::Status write_gguf(const TensorDirectory& dir, const std::string& path,
                        const std::function<absl::Status(float)>& progress) {
  uint64_t align = 32;
  if (const MetaValue* a = dir.meta("general.alignment"); a && a->as_int() && *a->as_int() > 0)
    align = static_cast<uint64_t>(*a->as_int());
  const std::string tmp = path + ".tmp";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(tmp.c_str(), "wb"), std::fclose);
  if (!f) return error(Code::kIo, "cannot create '{}': {}", tmp, std::strerror(errno));
  Out o(f.get());
  o.put(kMagic);
  o.put(uint32_t{3});
  o.put(uint64_t(dir.tensors().size()));
  o.put(uint64_t(dir.meta_entries().size()));
  for (const auto& [key, v] : dir.meta_entries()) {
    o.str(key);
    o.put(uint32_t(v.type));
    put_value(o, v, v.type);
  }
  uint64_t offset = 0, total = 0;
  for (const TensorInfo& t : dir.tensors()) {
    o.str(t.name);
    o.put(uint32_t(std::max(t.n_dims, 1)));
    for (int k = 0; k < std::max(t.n_dims, 1); ++k) o.put(uint64_t(t.ne[k]));
    o.put(t.type);
    o.put(offset);
    offset += (t.n_bytes + align - 1) / align * align;
    total += t.n_bytes;
  }
  o.pad_to(align);
  uint64_t done = 0;
  for (const TensorInfo& t : dir.tensors()) {
    o.bytes(t.data, t.n_bytes);
    o.pad_to(align);
    done += t.n_bytes;
    if (!o.ok()) break;
    if (progress && total) BW24_RETURN_IF_ERROR(progress(static_cast<float>(done) / static_cast<float>(total)));
  }
  if (!o.ok() || std::fflush(f.get()) != 0) {
    std::remove(tmp.c_str());
    return error(Code::kIo, "writing '{}' failed: {}", tmp, std::strerror(errno));
  }
  f.reset();
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return error(Code::kIo, "cannot rename '{}' to '{}': {}", tmp, path, ec.message());
  return absl::OkStatus();
}

}  // namespace bw24::loaders
