// bw24-synth SHAPE QUANT OUT.gguf: writes the synthetic model bw24-bench builds in memory
// (benchmarks/synthetic.cpp: real shapes, llama-quantize's tensor-type mix, random weights) as a
// GGUF with llama.cpp's tensor names and metadata plus a placeholder vocabulary, so llama.cpp's
// llama-bench can run the very bytes bw24-bench measures.
#include <cstdio>
#include <string>

#include "benchmarks/synthetic.h"
#include "lib/core/status.h"
#include "loaders/gguf/gguf_write.h"

int main(int argc, char** argv) {
  using namespace bw24;
  if (argc != 4) {
    std::string shapes;
    for (const auto& s : bench::synthetic_shapes()) shapes += (shapes.empty() ? "" : ", ") + s;
    std::fprintf(stderr,
                 "usage: bw24-synth SHAPE QUANT OUT.gguf\n  SHAPE: %s\n  QUANT: Q4_K_M, Q5_K_M, Q8_0, Q4_0, Q4_1, "
                 "Q5_0, Q5_1, Q6_K, IQ4_XS, BF16, F16\n",
                 shapes.c_str());
    return 2;
  }
  auto dir = bench::build_synthetic(argv[1], argv[2]);
  if (!dir.ok()) {
    std::fprintf(stderr, "bw24-synth: %s\n", message_of(dir.status()).c_str());
    return 1;
  }
  absl::Status st = bench::add_synthetic_vocab(**dir);
  int last = -1;
  if (st.ok())
    st = loaders::write_gguf(**dir, argv[3], [&](float f) {
      const int pct = static_cast<int>(f * 100);
      if (pct / 10 != last / 10) std::fprintf(stderr, "\rwriting %s: %3d %%", argv[3], pct);
      last = pct;
      return absl::OkStatus();
    });
  if (!st.ok()) {
    std::fprintf(stderr, "\nbw24-synth: %s\n", message_of(st).c_str());
    return 1;
  }
  std::fprintf(stderr, "\nwrote %s\n", argv[3]);
  return 0;
}
