// Token selection on the device, so the decode loop reads back a token id (4 bytes) instead of
// the logits row (n_vocab x 4 bytes: 600 KB for Qwen3, plus the host's pass over it).
// bw24-kernel-check compares it with sampling::argmax.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

// *out = the index of the largest of x[0, n), the lowest such index on ties (as
// sampling::argmax). One CTA: n = 152K floats is 600 KB, a few microseconds from L2.
cudaError_t argmax(int32_t* out, const float* x, int32_t n, cudaStream_t stream);

}  // namespace bw24::cuda
