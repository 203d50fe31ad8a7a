// libFuzzer target: the GGUF reader must reject or accept any byte string without crashing,
// leaking or allocating beyond a small multiple of the input.
#include <cstddef>
#include <cstdint>

#include "loaders/gguf/gguf.h"

extern "C" int bw24_fuzz_gguf(const uint8_t* data, size_t size) {
  bw24::loaders::TensorDirectory dir;
  (void)bw24::loaders::parse_gguf(data, size, &dir);
  for (const auto& [key, value] : dir.meta_entries()) (void)value.to_text();
  return 0;
}

#ifdef BW24_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return bw24_fuzz_gguf(data, size); }
#endif
