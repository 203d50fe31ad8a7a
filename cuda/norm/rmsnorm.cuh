// RMSNorm on the device: y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * (w or 1 + w), rows independent;
// and the same fused with the int8 quantization of the result for the int8 GEMV path.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace bw24::cuda {

// One CTA of 256 threads per row; x, y: [rows][n] f32; w: [n] f32.
// Bytes: 8n read + 4n written per row -> bandwidth bound; rows are small (n <= 16K).
cudaError_t rmsnorm(float* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                    cudaStream_t stream);

// The input of an int8-path GEMV (cuda/gemv/gemv.cuh ActQ8) in one pass: v = rmsnorm(x) (w null: v =
// x, no norm), q = v in int8 blocks of 32, ds = each block's (d, d * sum q); y (may be null) = v.
// n % 32 == 0. q: [rows][n], ds: [rows][n / 32]. per256 (n % 256 == 0): one d for each 256
// elements, repeated in their 8 blocks' ds (each block's (d, d * sum q) stays exact; the
// superblock-wide int8 grouped GEMM relies on the shared d).
cudaError_t rmsnorm_q8(float* y, int8_t* q, float2* ds, const float* x, const float* w, int rows, int n, float eps,
                       bool one_plus, cudaStream_t stream, bool per256 = false);

// The input of the prefill GEMM (cuda/gemm/gemm.cuh): y = rmsnorm(x) as bf16 (w null: y = x, no
// norm, a plain conversion). y: [rows][n] bf16.
cudaError_t rmsnorm_bf16(__nv_bfloat16* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                         cudaStream_t stream);

}  // namespace bw24::cuda
