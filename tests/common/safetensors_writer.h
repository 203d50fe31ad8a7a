// A safetensors file for tests: the 8-byte little-endian header length, the JSON header, then
// payload_bytes zero bytes of tensor data.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace bw24::test {

inline std::vector<uint8_t> safetensors_file(const std::string& header, size_t payload_bytes) {
  std::vector<uint8_t> b(8);
  const uint64_t n = header.size();
  std::memcpy(b.data(), &n, 8);
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + payload_bytes, 0);
  return b;
}

}  // namespace bw24::test
