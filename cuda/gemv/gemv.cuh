// Decode GEMV over quantized weights in their file layout: y[t][r] = sum_c W[r][c] * x[t][c] for
// up to 8 tokens. Version 1 (correctness first): one warp per row, each lane walks whole blocks
// and dequantizes in registers; no repack, no vector loads, no activation quantization yet. The
// bandwidth versions (repacked layouts, 16-byte loads, >= 32 KB in flight per SM) replace it
// behind this signature, checked by bw24-kernel-check against lib/ref.
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
