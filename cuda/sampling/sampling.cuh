// Token selection on the device, so the decode loop reads back a token id (4 bytes) instead of
// the logits row (n_vocab x 4 bytes: 600 KB for Qwen3, plus the host's pass over it).
// bw24-kernel-check compares argmax with sampling::argmax and sample_top_k with sampling::Sampler.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

// *out = the index of the largest of x[0, n), the lowest such index on ties (as
// sampling::argmax). One CTA: n = 152K floats is 600 KB, a few microseconds from L2.
cudaError_t argmax(int32_t* out, const float* x, int32_t n, cudaStream_t stream);

// Sampling with top-k (1 <= top_k <= kSampleMaxTopK), temperature > 0, top-p and min-p, as
// sampling::Sampler::sample computes it without penalties, given the uniform draw u in [0, 1) that
// the host sampler would take (Sampler::draw): *out = the token. One CTA; cuda/sampling/sample.cu.
constexpr int kSampleMaxTopK = 1024;
struct SampleParams {
  float temperature;
  int32_t top_k;
  float top_p, min_p;
};
cudaError_t sample_top_k(int32_t* out, const float* logits, int32_t n, const SampleParams& p, double u,
                         cudaStream_t stream);

}  // namespace bw24::cuda
