// Small elementwise and attention kernels of the CUDA runner, version 1 (correctness first; the
// fused and bandwidth-tuned versions replace them behind these signatures, checked by
// bw24-kernel-check against lib/ref).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

// Rotate the first rope_dims channels of each head of x: [n_tokens][n_heads][head_dim], token t at
// position pos0 + t. neox: pairs (i, i + rope_dims/2); else adjacent pairs (2i, 2i+1).
cudaError_t rope(float* x, int n_tokens, int n_heads, int head_dim, int rope_dims, int64_t pos0, float theta,
                 bool neox, cudaStream_t stream);

// y = act(gate) * up over n elements (act: 0 = SiLU, 1 = tanh GELU).
cudaError_t gated_act(float* y, const float* gate, const float* up, int64_t n, int act, cudaStream_t stream);

// x += y over n elements.
cudaError_t add_inplace(float* x, const float* y, int64_t n, cudaStream_t stream);

// Copy n_tokens rows of K and V ([n_tokens][kv_width]) into the layer's caches
// ([n_ctx][kv_width], f32) at positions pos0 ...
cudaError_t kv_store(float* k_cache, float* v_cache, const float* k, const float* v, int n_tokens, int kv_width,
                     int64_t pos0, cudaStream_t stream);

// Causal GQA attention, one CTA per (query head, token): out [n_tokens][n_head][head_dim]; token t
// at position pos0 + t sees cache positions [max(0, p - window + 1), p] (window 0 = all).
// scores: scratch of n_tokens * n_head * n_ctx floats.
cudaError_t attention(float* out, const float* q, const float* k_cache, const float* v_cache, float* scores,
                      int n_tokens, int n_head, int n_head_kv, int head_dim, int64_t pos0, int window, float scale,
                      int n_ctx, cudaStream_t stream);

}  // namespace bw24::cuda
