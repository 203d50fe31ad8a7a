// Runs every file of the given directories (recursively) through the fuzz entry points: the seed
// corpora and regression files replay in every normal test run, without libFuzzer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int bw24_fuzz_gguf(const uint8_t* data, size_t size);
extern "C" int bw24_fuzz_safetensors(const uint8_t* data, size_t size);
extern "C" int bw24_fuzz_tokenizer(const uint8_t* data, size_t size);
extern "C" int bw24_fuzz_template(const uint8_t* data, size_t size);
extern "C" int bw24_fuzz_model(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int n = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
      if (!e.is_regular_file()) continue;
      std::ifstream f(e.path(), std::ios::binary);
      std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      bw24_fuzz_gguf(b.data(), b.size());
      bw24_fuzz_safetensors(b.data(), b.size());
      bw24_fuzz_tokenizer(b.data(), b.size());
      bw24_fuzz_template(b.data(), b.size());
      bw24_fuzz_model(b.data(), b.size());
      ++n;
    }
  }
  std::printf("replayed %d inputs through the GGUF, safetensors, tokenizer, template and model fuzz targets\n", n);
  return n > 0 ? 0 : 1;
}
