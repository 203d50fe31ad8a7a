// Helpers the example programs share. They use only the C API and the standard library, like the
// programs themselves (a host application would carry the same few lines).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bw24.h"

namespace bw24_example {

// Length of the longest prefix of s that does not end inside a UTF-8 character: what a streaming
// printer may write now (token pieces can split a character).
inline size_t complete_utf8_prefix(const std::string& s) {
  size_t n = s.size(), i = n;
  for (int back = 0; back < 4 && i > 0; ++back) {
    auto c = static_cast<unsigned char>(s[i - 1]);
    if ((c & 0xC0) == 0x80) {  // continuation byte
      --i;
      continue;
    }
    if (c < 0x80) return n;  // ASCII ends everything before it
    int len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    return (n - (i - 1)) >= static_cast<size_t>(len) ? n : i - 1;
  }
  return n;
}

// A load-progress callback (bw24_model_params::progress) for a terminal: "loading NN%" on stderr in steps
// of 10 %, the line cleared at 100 %.
inline int32_t print_load_progress(float fraction, void*) {
  static int last = -1;
  const int pct = static_cast<int>(fraction * 100);
  if (pct / 10 != last / 10) {
    std::fprintf(stderr, "\rloading %3d%%", pct);
    if (pct >= 100) std::fprintf(stderr, "\r             \r");
    last = pct;
  }
  return 0;
}

// "cpu" -> -1, "cuda" -> 0, "cuda:N" -> N.
inline bool parse_device(const char* s, int32_t* device) {
  if (std::strcmp(s, "cpu") == 0) {
    *device = -1;
    return true;
  }
  if (std::strncmp(s, "cuda", 4) != 0) return false;
  if (s[4] == '\0') {
    *device = 0;
    return true;
  }
  if (s[4] != ':') return false;
  char* end;
  long v = std::strtol(s + 5, &end, 10);
  if (*end || v < 0 || v > 1024) return false;
  *device = static_cast<int32_t>(v);
  return true;
}

// The KV cache types parse_kv_arg takes, for the programs' messages.
inline constexpr const char* kKvTypeNames = "f32, f16, bf16, q8_0, q4_0, fp8_e4m3";

// The KV cache flags both programs take: --kv TYPE sets K and V, --kv-k / --kv-v one of them. TYPE is
// f32, f16, bf16, q8_0, q4_0 or fp8_e4m3 (BW24_KV_*); unset, the backend chooses (BW24_KV_AUTO: f32 on
// the CPU reference, f16 on CUDA). Returns false when `flag` is not one of them; *bad_type is set
// when its value names no type.
template <class Value>
bool parse_kv_arg(const std::string& flag, Value&& value, bw24_session_params* sp, bool* bad_type) {
  if (flag != "--kv" && flag != "--kv-k" && flag != "--kv-v") return false;
  static constexpr struct {
    const char* name;
    int32_t code;
  } kTypes[] = {{"f32", BW24_KV_F32},   {"f16", BW24_KV_F16},   {"bf16", BW24_KV_BF16},
                {"q8_0", BW24_KV_Q8_0}, {"q4_0", BW24_KV_Q4_0}, {"fp8_e4m3", BW24_KV_FP8_E4M3}};
  const char* name = value();
  *bad_type = true;
  for (const auto& t : kTypes)
    if (std::strcmp(name, t.name) == 0) {
      if (flag != "--kv-v") sp->kv_type_k = t.code;
      if (flag != "--kv-k") sp->kv_type_v = t.code;
      *bad_type = false;
    }
  return true;
}

// --option KEY=VALUE, the model options of docs/abi.md (prefault, cuda_graph, kv_rotate), may repeat:
// each appended to *options, ';'-separated, for bw24_model_params.options. The library checks the
// keys and values (unknown ones are refused with the known keys named). False when `flag` is not it.
template <class Value>
bool parse_option_arg(const std::string& flag, Value&& value, std::string* options) {
  if (flag != "--option") return false;
  if (!options->empty()) *options += ';';
  *options += value();
  return true;
}

// The sampling flags both programs take (--temp, --top-k, --top-p, --min-p, --seed). value() returns
// the flag's argument; false when `flag` is not one of them.
template <class Value>
bool parse_sampling_arg(const std::string& flag, Value&& value, bw24_sampling* sp) {
  if (flag == "--temp") sp->temperature = std::strtof(value(), nullptr);
  else if (flag == "--top-k") sp->top_k = std::atoi(value());
  else if (flag == "--top-p") sp->top_p = std::strtof(value(), nullptr);
  else if (flag == "--min-p") sp->min_p = std::strtof(value(), nullptr);
  else if (flag == "--seed") sp->seed = std::strtoull(value(), nullptr, 10);
  else return false;
  return true;
}

}  // namespace bw24_example
