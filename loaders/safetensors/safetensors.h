// safetensors container reader (formats.md §5.0): u64 header length, JSON header, raw data.
// Checks every dtype, shape, offset and size; returns the raw entries in file order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24::loaders {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;           // as written: "F32", "BF16", "F8_E4M3", ...
  std::vector<int64_t> shape;  // row-major, outermost first (PyTorch order)
  const uint8_t* data = nullptr;
  uint64_t n_bytes = 0;
};

// Bytes per element of a safetensors dtype, 0 if unknown.
size_t safetensors_dtype_size(const std::string& dtype);

absl::StatusOr<std::vector<SafetensorsEntry>> parse_safetensors(const uint8_t* data, size_t size);

}  // namespace bw24::loaders
