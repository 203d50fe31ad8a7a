// RMSNorm on the device: y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * (w or 1 + w), rows independent.
#pragma once

#include <cuda_runtime.h>

namespace bw24::cuda {

// One CTA of 256 threads per row; x, y: [rows][n] f32; w: [n] f32.
// Bytes: 8n read + 4n written per row -> bandwidth bound; rows are small (n <= 16K).
cudaError_t rmsnorm(float* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                    cudaStream_t stream);

}  // namespace bw24::cuda
