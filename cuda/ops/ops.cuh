// Small elementwise, RoPE/KV and attention kernels of the CUDA runner (checked by
// bw24-kernel-check against lib/ref). Attention here is version 1 (one CTA per head and token);
// the flash kernels of cuda/attention replace it where they apply.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace bw24::cuda {

// A token's position: base + t (+ *dev when dev is set: the position lives on the device, so a
// captured CUDA graph replays at the current position).
struct DevicePos {
  const int64_t* dev;
  int64_t base;
};

constexpr int kMaxHeadDim = 512;

// Element type of a layer's KV cache on the device. f32 / f16 / bf16 / fp8 (e4m3, lib/core's
// codec: saturating, ties to even): elements [n_ctx][kvw]. q8_0: int8 quants [n_ctx][kvw], then one
// f16 scale per 32 quants [n_ctx][kvw / 32] (x = d q; blocks of 32 within a head row, kvw % 32 ==
// 0), the planes apart so that quant loads stay aligned. q4_0: the same with 4-bit quants, two
// per byte in element order (element 2j in the low nibble of byte j), x = d (q - 8), quantized as
// lib/quant's q4_0. Bytes per position: 4, 2, 2, 1, 1.0625 and 0.5625 kvw.
enum class KvDtype : int { kF32 = 0, kF16 = 1, kQ8_0 = 2, kBF16 = 3, kQ4_0 = 4, kFp8E4M3 = 5 };
__host__ __device__ inline bool kv_blocked(KvDtype t) { return t == KvDtype::kQ8_0 || t == KvDtype::kQ4_0; }
// The K and V cache types of a layer (one type converts to both).
struct KvTypes {
  KvDtype k, v;
  __host__ __device__ KvTypes(KvDtype t) : k(t), v(t) {}  // NOLINT(google-explicit-constructor): K = V
  __host__ __device__ KvTypes(KvDtype k_type, KvDtype v_type) : k(k_type), v(v_type) {}
  __host__ __device__ bool blocked() const { return kv_blocked(k) || kv_blocked(v); }
};
inline int64_t kv_cache_bytes(KvDtype t, int64_t n_ctx, int64_t kvw) {
  const int64_t e = n_ctx * kvw;
  switch (t) {
    case KvDtype::kF32: return 4 * e;
    case KvDtype::kF16: case KvDtype::kBF16: return 2 * e;
    case KvDtype::kQ8_0: return e + e / 16;
    case KvDtype::kQ4_0: return e / 2 + e / 16;
    case KvDtype::kFp8E4M3: return e;
  }
  return 4 * e;
}

// Q/K of one layer after the QKV projection: optional per-head RMSNorm (q_norm / k_norm null =
// none), RoPE on the first rope_dims channels (neox: pairs (i, i + rope_dims/2), else (2i, 2i+1);
// angle pos * theta^(-2i / rope_dims)), queries in place, keys and values stored into the layer's
// caches ([n_ctx][n_head_kv * head_dim] of kv_type; q8_0 blocks quantized as lib/quant's q8_0:
// d = amax / 127, q = round(x / d)) at their positions. One launch replaces five.
struct QkRopeArgs {
  float* q;                     // [n_tokens][n_head][head_dim]
  const float *k, *v;           // [n_tokens][n_head_kv * head_dim]
  void *k_cache, *v_cache;      // of kv_type.k and kv_type.v (KvDtype)
  KvTypes kv_type = KvDtype::kF32;
  int64_t n_ctx;                // positions the caches hold (q8_0: where the scale plane starts)
  const float *q_norm, *k_norm;
  bool q_one_plus, k_one_plus;
  float eps;
  int n_head, n_head_kv, head_dim, rope_dims;
  float theta;
  const double* inv_freq;       // [rope_dims / 2] theta^(-2i / rope_dims) (null: computed per use
                                // with pow, ~40 % of the kernel's time in a 512-token prefill)
  bool neox;
  DevicePos pos;
  int64_t q_stride = 0;         // floats between query heads of q (0: head_dim); flash decode's fused
                                // RoPE only (qk_rope_store rewrites q in place and takes head_dim)
  const float2* angles = nullptr;  // flash decode's fused RoPE of one token only: the token's (cos, sin)
                                   // per rotation pair, rope_table's row (null: computed per CTA)
};
cudaError_t qk_rope_store(const QkRopeArgs& args, int n_tokens, cudaStream_t stream);

// The (cos, sin) of every rotation pair of one token at pos.base + *pos.dev, for n_layers rope
// configurations at once: out[l * stride + i] for pair i < rope_dims[l] / 2, with rope_angles'
// arithmetic (so its bits). A one-token step launches it once; flash decode's fused RoPE then loads
// a row after its PDL wait (QkRopeArgs::angles) instead of computing the angles in every CTA.
struct RopeTableLayer {
  const double* inv_freq;  // [rope_dims / 2], or null (theta)
  float theta;
  int rope_dims;
};
cudaError_t rope_table(float2* out, int64_t stride, const RopeTableLayer* layers, int n_layers, DevicePos pos,
                       cudaStream_t stream);

// y = act(gate) * up over n elements (act: 0 = SiLU, 1 = tanh GELU).
cudaError_t gated_act(float* y, const float* gate, const float* up, int64_t n, int act, cudaStream_t stream);
// The same into bf16 (the input of the prefill GEMM of the down projection).
cudaError_t gated_act_bf16(__nv_bfloat16* y, const float* gate, const float* up, int64_t n, int act,
                           cudaStream_t stream);

// Gated attention (Qwen3.5): the q projection's rows per head are [q (D) | gate (D)]; split them
// into q [n][n_head][D] and gate (same shape). After attention, x *= sigmoid(gate) over n elements.
cudaError_t split_q_gate(float* q, float* gate, const float* qg, int n_tokens, int n_head, int head_dim,
                         cudaStream_t stream);
cudaError_t sigmoid_mul(float* x, const float* gate, int64_t n, cudaStream_t stream);

// x += y over n elements.
cudaError_t add_inplace(float* x, const float* y, int64_t n, cudaStream_t stream);

// Causal GQA attention, one CTA per (query head, token): out [n_tokens][n_head][head_dim]; token t
// at position pos(t) sees cache positions [max(0, p - window + 1), p] (window 0 = all). Caches of
// any KvDtype (n_ctx positions). scores: scratch of n_tokens * n_head * n_ctx floats. Version 1,
// kept for head sizes the flash kernels (cuda/attention/flash.cuh) do not take.
cudaError_t attention(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv, float* scores,
                      int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos, int window, float scale,
                      int n_ctx, cudaStream_t stream);

}  // namespace bw24::cuda
