// Typed reads of "<arch>.<key>" metadata with clear errors: a missing or mistyped
// hyper-parameter names the key and what was expected.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::arch {

class MetaReader {
 public:
  MetaReader(const loaders::TensorDirectory& dir, std::string arch) : dir_(dir), arch_(std::move(arch)) {}

  // key is relative to the arch ("embedding_length" reads "<arch>.embedding_length").
  absl::StatusOr<int32_t> u32(std::string_view key) const;
  absl::StatusOr<int32_t> u32_or(std::string_view key, int32_t fallback) const;
  absl::StatusOr<float> f32_or(std::string_view key, float fallback) const;
  absl::StatusOr<bool> bool_or(std::string_view key, bool fallback) const;
  bool has(std::string_view key) const;
  std::string str_or(std::string_view key, std::string fallback) const;  // absolute key
  const loaders::TensorDirectory& dir() const { return dir_; }

 private:
  std::string full(std::string_view key) const { return arch_ + "." + std::string(key); }
  const loaders::TensorDirectory& dir_;
  std::string arch_;
};

}  // namespace bw24::arch
