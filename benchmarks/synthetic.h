// Synthetic models at real shapes (gates.md §2): random weights in any supported quant mix, built
// in memory, for bw24-bench. Decode speed of a dense model does not depend on the weight values;
// block scales are set to small fp16 values so activations stay finite. The tiny shapes (GPU vs
// CPU tests) instead quantize N(0, 1/fan_in) weights with the reference quantizers, so their
// activations have trained-like statistics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::bench {

// shape: qwen3-0.6b, qwen3-8b, qwen3-14b, qwen3-32b, llama3-8b, qwen3-30b-a3b (MoE; the random router
// spreads tokens over the experts) and tiny-qwen3, tiny-llama, tiny-qwen3moe for tests.
// quant: Q4_K_M, Q5_K_M, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q6_K, IQ4_XS, BF16, F16.
absl::StatusOr<std::unique_ptr<loaders::TensorDirectory>> build_synthetic(const std::string& shape,
                                                                          const std::string& quant);
std::vector<std::string> synthetic_shapes();

// A SentencePiece-style vocabulary of the model's size for the file form (bw24-synth), so that
// llama.cpp and bw24 both load it with a tokenizer: <unk> <s> </s>, the 256 byte tokens, then
// "▁t<N>" pieces. bos 1, eos 2.
absl::Status add_synthetic_vocab(loaders::TensorDirectory& dir);

}  // namespace bw24::bench
