// Decode GEMV over quantized weights in their file layout: y[t][r] = sum_c W[r][c] * x[t][c] for
// up to 8 tokens, one warp per row.
//  v2 (Q4_K, Q6_K, Q8_0, BF16, F16): the lanes of a warp split each block so loads are contiguous,
//     16-byte loads where the layout is 16-byte aligned; activations read through the read-only
//     cache.
//  v1 (F32, Q4_0, Q4_1, Q5_0, unaligned 16-bit rows): each lane walks whole blocks.
// Next: repacked layouts (16-byte aligned for every format), activations in shared memory, more
// bytes in flight, fused epilogues (kernels-hopper.md). bw24-kernel-check guards every version.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

constexpr int kGemvMaxTokens = 8;

// Whether gemv() handles this ggml type id.
bool gemv_supports(uint32_t ggml_type);

// w: rows x (cols / block_elems) blocks of ggml type `ggml_type`, row-major, on the device.
// x: [n_tokens][cols] f32, y: [n_tokens][rows] f32. 1 <= n_tokens <= kGemvMaxTokens.
cudaError_t gemv(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, const float* x, int n_tokens,
                 float* y, cudaStream_t stream);

}  // namespace bw24::cuda
