// Prefill GEMM on tensor cores: C[m][n] (=|+=) sum_k A[m][k] * W[n][k] for M tokens (tens to
// thousands) against a weight matrix of N rows, bf16 operands, f32 accumulation (mma.sync
// m16n8k16, sm_80+). Quantized weights are expanded to bf16 first (dequant_bf16, a slice of rows at
// a time into a scratch buffer) and the one GEMM kernel serves every weight type.
//
// Why dequantize-then-GEMM (version 1): at M = 512 the GEMM does 2 * 512 FLOPs per weight while
// the expansion moves ~2.3 bytes per weight (read Q4_K, write bf16) plus 2 read back: for Qwen3-8B
// ~37 GB per 512-token pass, ~11 ms at 3.4 TB/s, against ~8.2 TFLOP, 20-30 ms on the tensor cores.
// A fused dequant inside the GEMM's B-tile load removes the 11 ms; it is the next step.
//
// Why bf16 and not fp16: the residual stream of Gemma-3 and the SiLU products of large models
// exceed fp16's 65504; bf16 has f32's range. Its 8-bit mantissa is finer than the int8 blocks of
// the decode GEMV's activations.
//
// bw24-kernel-check compares dequant_bf16 with lib/ref's dequantization and gemm_bf16 with an f64
// matmul over the same bf16 operands.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/gemv/gemv.cuh"

namespace bw24::cuda {

using bf16 = __nv_bfloat16;

// Whether dequant_bf16 (and so the prefill GEMM) takes weights of this type: F16, BF16 and the
// quantized types of the int8 GEMV path, in the kernel-native layout (lib/quant/repack.h).
bool gemm_supports(uint32_t ggml_type);

// Rows [row0, row0 + n_rows) of the rows x cols weight w (kernel-native layout) as bf16 into
// out[n_rows][cols]. cols a multiple of the format's block (256 for the K-quants, 32 for the
// legacy formats, 8 for F16/BF16).
cudaError_t dequant_bf16(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows,
                         bf16* out, cudaStream_t stream);

// C[m * ldc + n] for m < M, n < N: out kStore (=) or kAdd (+=). A [M][K], W [N][K] bf16 row-major;
// K % 32 == 0, N even.
// config: an entry of the tile-configuration table (benchmarks), -1 = the table's pick for the shape.
cudaError_t gemm_bf16(const bf16* a, const bf16* w, float* c, int64_t m, int64_t n, int64_t k, int64_t ldc, GemvOut out,
                      cudaStream_t stream, int config = -1);
int gemm_bf16_config_count();
const char* gemm_bf16_config_name(int config);

// Several weight matrices over the same A in one launch (Q, K and V; gate and up): each segment
// its own W [n][K] and C (ldc). One launch fills the GPU where K and V alone (1024 rows: 8 column
// tiles) left most SMs idle.
constexpr int kMaxGemmSegments = 3;
struct GemmSegment {
  const bf16* w;
  float* c;
  int64_t n, ldc;
};
cudaError_t gemm_bf16_multi(const bf16* a, const GemmSegment* segs, int n_segs, int64_t m, int64_t k, GemvOut out,
                            cudaStream_t stream, int config = -1);

}  // namespace bw24::cuda
