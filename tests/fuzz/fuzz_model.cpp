// libFuzzer target: a GGUF model file, from the bytes to a few decoded tokens on the CPU reference
// (host decoding and the emulated device paths, run-ahead included).
// Whatever the metadata and tensor shapes say, building the graph, creating a session and running
// it must either fail with a status or run, without crashing, leaking or allocating beyond what
// the file's own tensors justify. Seeds: bw24-synth's fuzz-* shapes (benchmarks/synthetic.cpp),
// written by tools/fuzz-seeds.sh at test time.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "lib/engine/model.h"
#include "lib/engine/session.h"
#include "loaders/gguf/gguf.h"

extern "C" int bw24_fuzz_model(const uint8_t* data, size_t size) {
  using namespace bw24;
  auto dir = std::make_unique<loaders::TensorDirectory>();
  if (!loaders::parse_gguf(data, size, dir.get()).ok()) return 0;
  engine::ModelOptions mo;
  mo.n_threads = 1;
  auto model = engine::Model::from_directory(std::move(dir), "fuzz", mo);
  if (!model.ok()) return 0;
  // The host's decoding, then the device's paths as the reference runner emulates them (the token
  // chosen by the runner, steps queued ahead and taken back at an end of generation).
  for (const bool device_paths : {false, true}) {
    engine::SessionOptions so;
    so.n_ctx = 8;
    so.emulate_device_choice = device_paths;
    auto session = engine::Session::create(*model, so);
    if (!session.ok()) return 0;
    engine::Session& s = **session;
    const int32_t V = (*model)->graph().n_vocab;
    const int32_t prompt[3] = {0, 1 % V, 2 % V};
    if (!s.prefill(prompt, 3, false).ok()) return 0;
    const float* logits;
    int32_t rows, vocab;
    (void)s.logits(&logits, &rows, &vocab);
    int32_t out[3];
    engine::DecodeResult r;
    (void)s.decode({}, std::nullopt, !device_paths, out, 3, &r);
    (void)s.rewind(2);
    (void)s.decode({}, std::nullopt, true, out, 1, &r);
  }
  return 0;
}

#ifdef BW24_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return bw24_fuzz_model(data, size); }
#endif
