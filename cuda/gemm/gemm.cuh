// Prefill GEMM on tensor cores: C[m][n] (=|+=) sum_k A[m][k] * W[n][k] for M tokens (tens to
// thousands) against a weight matrix of N rows, bf16 operands, f32 accumulation (mma.sync
// m16n8k16, sm_80+; on sm_90a the dense GEMM takes wgmma fed by TMA). Dense quantized weights are
// expanded to bf16 first (dequant_bf16, a slice of rows at a time into a scratch buffer; the
// runner expands the next group on a side stream while this one multiplies), so one dense GEMM
// serves every weight type.
//
// Why dequantize-then-GEMM for dense weights: at M = 512 every weight tile meets 4-8 token tiles,
// each of which would expand it again inside the GEMM; the one expansion pass (~2.3 bytes a weight
// written, 2 read back) measured faster and runs hidden beside the previous GEMM.
//
// Why bf16 and not fp16: the residual stream of Gemma-3 and the SiLU products of large models
// exceed fp16's 65504; bf16 has f32's range. Its 8-bit mantissa is finer than the int8 blocks of
// the decode GEMV's activations.
//
// MoE prefill uses the mma.sync tile code as a grouped GEMM (gemm_grouped): a CTA per (64-row
// tile of one expert's sorted pairs, weight-row tile), each expert's weight tile read once
// (~32 tokens an expert); Q4_K / Q6_K experts go through gemm_grouped_q8 instead (int8 MMA on the
// quants as stored, no expansion).
//
// bw24-kernel-check compares dequant_bf16 with lib/ref's dequantization, gemm_bf16, gemm_grouped
// and gemm_grouped_q8 with an f64 matmul over the same operands.
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

// Whether dequant_bf16 takes the type: gemm_supports' and F32 (F32 models keep their products in
// f32 on the GEMV; an F32 MoE router of a quantized model goes through the GEMM in prefill).
bool dequant_bf16_supports(uint32_t ggml_type);

// Rows [row0, row0 + n_rows) of the rows x cols weight w (kernel-native layout) as bf16 into
// out[n_rows][cols]. cols a multiple of the format's block (256 for the K-quants, 32 for the
// legacy formats, 8 for F16/BF16).
cudaError_t dequant_bf16(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows,
                         bf16* out, cudaStream_t stream);

// Slices [0, slices) of a stack (MoE experts), slice i at w + i * slice_bytes, each a rows x cols
// weight in the kernel-native layout, into out[slices][rows][cols]. One launch.
cudaError_t dequant_bf16_slices(const void* w, uint32_t ggml_type, int64_t rows, int64_t cols, int64_t slice_bytes,
                                int slices, bf16* out, cudaStream_t stream);

// C[m * ldc + n] for m < M, n < N: out kStore (=) or kAdd (+=). A [M][K], W [N][K] bf16 row-major;
// K % 32 == 0 (any N and ldc >= N: odd ones store single floats).
// config: an entry of the tile-configuration table (benchmarks), -1 = the table's pick for the shape.
cudaError_t gemm_bf16(const bf16* a, const bf16* w, float* c, int64_t m, int64_t n, int64_t k, int64_t ldc, GemvOut out,
                      cudaStream_t stream, int config = -1);
int gemm_bf16_config_count();
const char* gemm_bf16_config_name(int config);
// Whether configuration `config` runs here for this K (the wgmma entries: an sm_90a build on an
// sm_90 device, K % 64 == 0; an explicit config that cannot run returns cudaErrorNotSupported).
bool gemm_bf16_config_runs(int config, int64_t k);
// Weight types the grouped GEMM reads in their kernel-native layout and expands tile by tile in
// shared memory (no dequant_bf16 pass): Q4_K (file layout) and Q6_K (planes). K % 256 == 0. The
// bf16 weights a tile sees are bit-identical to dequant_bf16's.
bool gemm_fused_supports(uint32_t ggml_type);

// Several weight matrices over the same A in one launch (Q, K and V; gate and up): each segment
// its own W [n][K] and C (ldc). One launch fills the GPU where K and V alone (1024 rows: 8 column
// tiles) left most SMs idle.
constexpr int kMaxGemmSegments = 3;
// w: bf16 [n][K], or (gemm_grouped) a fused type's kernel-native bytes; w_stride: bytes from one
// expert's weights to the next (gemm_grouped only). Both 16-byte aligned.
struct GemmSegment {
  const void* w;
  float* c;
  int64_t n, ldc;
  int64_t w_stride = 0;
};
cudaError_t gemm_bf16_multi(const bf16* a, const GemmSegment* segs, int n_segs, int64_t m, int64_t k, GemvOut out,
                            cudaStream_t stream, int config = -1);


// The grouped GEMM of MoE prefill over stacked experts: the rows of a pass's (token, expert)
// pairs sorted by expert (cuda/moe moe_group), each expert's rows against its own weights, in one
// launch per segment set. A segment's w holds experts [e0, e1), expert e at w + (e - e0) w_stride
// (bf16 [n][K], expanded or BF16 in place, or a fused type's native bytes); its c has one row per
// pair. Sorted row s of expert e (offsets[e] <= s <
// offsets[e + 1]) reads A row sorted[s] / a_div (a_div 0: row s) and writes C row sorted[s]
// (c_scatter) or s. The tile list: tiles[tile_start[e] ..) = {e, first sorted row} per
// kGemmGroupRows rows of expert e.
constexpr int kGemmGroupRows = 64;
struct GemmGroups {
  const int32_t* sorted;      // [pairs]: the pair index of sorted row s
  const int32_t* offsets;     // [n_expert + 1]
  const int32_t* tile_start;  // [n_expert + 1]
  const int2* tiles;          // [pairs / kGemmGroupRows + n_expert]
  int e0, e1;
  int a_div;
  bool c_scatter;
};
// max_rows: the pass's pair count (bounds the grid; tiles past the list exit at once).
cudaError_t gemm_grouped(const bf16* a, const GemmSegment* segs, int n_segs, uint32_t w_type, const GemmGroups& groups,
                         int64_t max_rows, int64_t k, GemvOut out, cudaStream_t stream);

// The same grouped product over int8 activations, the weights read as quantized (no bf16
// expansion): a rows are ActQ8 (int8 in blocks of 32 with (d, d * sum q): rmsnorm_q8's output),
// [rows][k] and [rows][k / 32], gathered through groups as a is above. With a.per256 (rmsnorm_q8's
// per256: one d a 256 columns) the superblock-wide kernel runs, else the per-sub-block one. Q4_K
// (file layout) and Q6_K (planes); k % 256 == 0.
bool gemm_grouped_q8_supports(uint32_t ggml_type);
cudaError_t gemm_grouped_q8(ActQ8 a, const GemmSegment* segs, int n_segs, uint32_t w_type, const GemmGroups& groups,
                            int64_t max_rows, int64_t k, GemvOut out, cudaStream_t stream);

}  // namespace bw24::cuda
