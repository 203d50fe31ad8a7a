// libFuzzer target: the safetensors container reader.
#include <cstddef>
#include <cstdint>

#include "loaders/safetensors/safetensors.h"

extern "C" int bw24_fuzz_safetensors(const uint8_t* data, size_t size) {
  (void)bw24::loaders::parse_safetensors(data, size);
  return 0;
}

#ifdef BW24_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return bw24_fuzz_safetensors(data, size); }
#endif
