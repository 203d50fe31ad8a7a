// Flash attention for prefill on tensor cores (FlashAttention-2 style): causal GQA attention of a
// chunk of n_tokens consecutive queries against the layer's f32 KV cache, without materializing
// the scores. One CTA of 4 warps per (64-query tile, query head); a warp owns 16 queries, walks the
// keys in tiles of 64 (S = Q K^T and O += P V as bf16 mma.sync m16n8k16, f32 accumulators) with an
// online softmax. K/V tiles are converted f32 -> bf16 into shared memory on the way in.
//
// Same contract as cuda::attention (cuda/ops/ops.cuh): q [n_tokens][n_head][D], out likewise,
// caches [n_ctx][n_head_kv * D], token t at position pos(t) = pos(0) + t sees cache positions
// [max(0, p - window + 1), p]. D in {64, 128} (flash_prefill_supports); others use cuda::attention.
//
// bw24-kernel-check compares it with ref::attend_head.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/ops/ops.cuh"

namespace bw24::cuda {

bool flash_prefill_supports(int head_dim);

cudaError_t flash_prefill(float* out, const float* q, const float* k_cache, const float* v_cache, int n_tokens,
                          int n_head, int n_head_kv, int head_dim, DevicePos pos, int window, float scale,
                          cudaStream_t stream);

}  // namespace bw24::cuda
