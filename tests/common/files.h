// Whole-file reads for tests (text or bytes; an unreadable file reads as empty).
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace bw24::test {

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace bw24::test
