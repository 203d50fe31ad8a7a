// GGUF v2/v3 reader (formats.md §1). Every count, length, dimension, offset and element type is
// bounds-checked against the bytes that remain, so a corrupt file gives Code::kFormat with a
// message naming the field and its byte offset, never a crash or an unbounded allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

// Parse a GGUF image held in memory; tensor data pointers point into [data, data + size).
absl::Status parse_gguf(const uint8_t* data, size_t size, TensorDirectory* out);

// Map the file and parse it; the directory keeps the mapping alive.
absl::StatusOr<std::unique_ptr<TensorDirectory>> load_gguf(const std::string& path);

}  // namespace bw24::loaders
