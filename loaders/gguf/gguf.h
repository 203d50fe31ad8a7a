// GGUF v2/v3 reader (formats.md §1). Every count, length, dimension, offset and element type is
// bounds-checked against the bytes that remain, so a corrupt file gives Code::kFormat with a
// message naming the field and its byte offset, never a crash or an unbounded allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

// Parse a GGUF image held in memory; tensor data pointers point into [data, data + size).
absl::Status parse_gguf(const uint8_t* data, size_t size, TensorDirectory* out);

// Map the file and parse it; the directory keeps the mapping alive.
absl::StatusOr<std::unique_ptr<TensorDirectory>> load_gguf(const std::string& path);

// The name of a `general.file_type` value (llama.cpp's LLAMA_FTYPE_MOSTLY_* ids: 15 is "Q4_K_M", the
// mix llama-quantize wrote); "" for ids without one (retired or unknown).
std::string_view file_type_name(int64_t file_type);
// The id of a name file_type_name gives ("Q4_K_M" -> 15); nullopt for any other name.
std::optional<uint32_t> file_type_id(std::string_view name);

}  // namespace bw24::loaders
