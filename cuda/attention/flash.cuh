// Flash attention on the layer's KV cache (any KvDtype, K and V of one type or two: cuda/ops/ops.cuh), two kernels:
//
// flash_prefill: tensor cores (FlashAttention-2 style), causal GQA attention of a chunk of
// n_tokens consecutive queries without materializing the scores. One CTA of 4 warps per (64-query tile, query head); a warp owns 16 queries, walks the
// keys in tiles of 64 (S = Q K^T and O += P V as bf16 mma.sync m16n8k16, f32 accumulators) with an
// online softmax. K/V tiles are converted f32 -> bf16 into shared memory on the way in.
//
// flash_decode: split-K decode attention for up to 8 tokens. The keys up to n_ctx are cut into
// splits of 128; a CTA per (KV head, split, token) computes the scores of all query heads of the
// group from one read of its K/V rows (GQA: 4 query heads of Qwen3-8B share one read), its
// softmax max and sum, and the unnormalized P V; the last CTA of a (KV head, token) to finish
// merges the splits (a counter in the scratch; past 1024 positions a merge kernel does), a lone
// visible split writes O itself. The grid covers n_ctx, not the current length: CTAs past the
// position exit at once, so a captured graph replays at every position. At depth 4096 a Qwen3-8B
// layer reads 16.8 MB of f16 K/V over 8 x 32 CTAs (4.8 us at 3.5 TB/s).
//
// Same contract as cuda::attention (cuda/ops/ops.cuh): q [n_tokens][n_head][D], out likewise,
// caches [n_ctx][n_head_kv * D], token t at position pos(t) = pos(0) + t sees cache positions
// [max(0, p - window + 1), p]. Head sizes: flash_prefill_supports / flash_decode_supports; others
// use cuda::attention.
//
// bw24-kernel-check compares both with ref::attend_head.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/ops/ops.cuh"

namespace bw24::cuda {

bool flash_prefill_supports(int head_dim);
cudaError_t flash_prefill(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv,
                          int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos, int window, float scale,
                          int n_ctx, cudaStream_t stream);

constexpr int kFlashDecodeSplit = 128;     // keys per split
// Positions below this need no merge kernel (a token's visible splits, at most 8, are merged by the
// split kernel's last CTA): flash_decode leaves that launch out when it knows every position of the
// call is below it (max_pos).
constexpr int64_t kFlashDecodeMergeFrom = 8 * kFlashDecodeSplit;
constexpr int kFlashDecodeMaxGroup = 8;    // query heads per KV head
constexpr int kFlashDecodeMaxTokens = 8;
constexpr int kFlashDecodeMaxKvHeads = 64;
bool flash_decode_supports(int head_dim, int n_head, int n_head_kv);
// Floats of scratch flash_decode needs: the merge counters, partial outputs and (max, sum) pairs
// of every split. flash_decode_init_scratch zeroes the counters once, before the first call; every
// call leaves them at zero, so one scratch serves all layers and token counts up to n_tokens.
int64_t flash_decode_scratch(int n_ctx, int n_tokens, int n_head, int head_dim);
cudaError_t flash_decode_init_scratch(float* scratch);
// What the writer of each O row does beyond storing it: times sigmoid(gate) (gated attention,
// Qwen3.5: element d of head h of token t at gate[(t n_head + h) gate_stride + d], sigmoid_mul's
// arithmetic; out then holds the gated value), and the result also as the O projection's int8 input
// (cuda/gemv ActQ8: q [n][n_head D] int8, ds [n][n_head D / 32] (d, d sum q)), as rmsnorm_q8
// without a norm would make it. Null pointers: that step is left out.
struct OutEpilogue {
  int8_t* q = nullptr;
  float2* ds = nullptr;
  const float* gate = nullptr;
  int64_t gate_stride = 0;
};
// rope (one token; null: q is ready, keys and values are in the cache): the call also does
// qk_rope_store's work for it (cuda/ops/ops.cuh, the same code: q from rope->q raw, the key and
// value heads into the cache), so that kernel's launch goes; its heads, caches and position must be
// this call's (rope->q_stride: floats between query heads in rope->q, 0 = head_dim; the gated
// layout's 2 head_dim reads q in place, without the split). out_ep: see OutEpilogue (the writer of
// each O row gates and quantizes it: sigmoid_mul's and rmsnorm_q8's launches go).
// max_pos (positions on the device, pos.dev): a bound on every position of the call the caller
// knows (a captured graph replayed only below kFlashDecodeMergeFrom), -1 if none; with host
// positions the call computes it. The split grid stops at the bound's split, and below
// kFlashDecodeMergeFrom the merge launch is left out: a bound the device's positions break gives
// wrong outputs. head_groups: CTAs a KV head's query heads are spread over in each split (a divisor
// of n_head / n_head_kv; 0: the call's choice, up to two CTAs an SM). The outputs are the same bits
// for every value; the kernel check compares them. history_ready: the cache rows below the call's
// first position were complete when the call was launched (written before a stream synchronization
// or a node that is not a PDL launch), so the kernel may read them before its PDL wait (keys ahead,
// flash_decode.cu); false where a kernel still in flight may write them (a pass's later groups of
// kFlashDecodeMaxTokens rows). The same bits either way.
cudaError_t flash_decode(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv,
                         float* scratch, int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos,
                         int window, float scale, int n_ctx, cudaStream_t stream, const QkRopeArgs* rope = nullptr,
                         OutEpilogue out_ep = {}, int64_t max_pos = -1, int head_groups = 0,
                         bool history_ready = false);

}  // namespace bw24::cuda
