// Mixture-of-experts routing and combination on the device (Qwen3-MoE, Qwen3.5-MoE, Qwen3-Next).
// A MoE layer on the CUDA runner (lib/engine/cuda_runner_moe.cpp):
//   decode: moe_gate (router product, softmax, top-k, renormalize: one launch; a quantized router:
//   GEMV then moe_route) -> ids, weights per (token, slot) pair -> routed gate-up GEMV and routed
//   down GEMV (cuda/gemv GemvRoute: one launch each, grid.y = pairs, expert chosen on the device)
//   -> moe_combine into the residual stream, with the shared expert's sigmoid-gated output where
//   the model has one (int8-path experts: the routed down GEMV combines itself, gemv_q8_combine).
//   prefill: router GEMM -> moe_route -> moe_group (pairs sorted by expert, a tile list) -> gate-up
//   and down as grouped GEMMs (cuda/gemm gemm_grouped) -> moe_combine.
// Everything stays on the device, so the decode step remains one CUDA graph.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/common/device.h"

namespace bw24::cuda {

constexpr int kMoeMaxUsed = 16;  // experts per token the route kernel takes

// Per token t (logits [n][n_expert] f32): p = softmax(logits[t]); the k largest (ties: the lower
// expert id, as the CPU reference's partial_sort) in descending order go to ids[t * k + j], their p
// (divided by the sum of the k when renormalize) to weights[t * k + j]. One CTA per token.
cudaError_t moe_route(int32_t* ids, float* weights, const float* logits, int n, int n_expert, int k,
                      bool renormalize, cudaStream_t stream);

// The router product and moe_route in one launch, for decode: logits[t][e] = W[e] . x[t] (W
// [n_expert][cols] in F32, F16 or BF16, x [n][cols] f32), then ids and weights as moe_route. counter:
// one unsigned in device memory, zero before the first call; each call leaves it zero. n <=
// kMoeGateMaxTokens; moe_gate_supports says whether a weight (16-byte aligned), type and shape
// qualify (else the GEMV and moe_route).
constexpr int kMoeGateMaxTokens = 8;
bool moe_gate_supports(const void* w, uint32_t type, int n, int n_expert, int64_t cols);
// With norm: x is the residual and the launch also does the MoE block's input norm, rmsnorm_q8's
// work (cuda/norm/rmsnorm.cuh, the same bits): norm->y = rmsnorm(x) f32 (the router reads it),
// norm->q / norm->ds its int8 blocks of 32 for the routed GEMVs; cols % 32 == 0. (The fused kernel
// wants w and y 16-byte aligned and q 4-byte aligned; otherwise rmsnorm_q8 runs first.)
struct MoeGateNorm {
  const float* w;  // the norm's weight [cols]
  float eps;
  bool one_plus;   // the weight is stored as w - 1 (Qwen3.5 GGUFs)
  float* y;        // [n][cols]
  int8_t* q;       // [n][cols]
  float2* ds;      // [n][cols / 32]
};
cudaError_t moe_gate(int32_t* ids, float* weights, float* logits, unsigned* counter, const void* w, uint32_t type,
                     const float* x, int n, int n_expert, int64_t cols, int k, bool renormalize, cudaStream_t stream,
                     const MoeGateNorm* norm = nullptr);
// One token of a 2,048-wide F32 router of 128 or 256 experts (Qwen3-30B-A3B, Qwen3.6-35B-A3B) on sm_90
// may take a cluster of 16 CTAs instead (gate_cluster_kernel, moe.cu): the same logits, ids and
// weights, bit for bit (Qwen3-30B-A3B tg128 +1.3 %, round 35). On by default where the cluster fits;
// A/B switch: BW24_GATE_CLUSTER=0 in the environment (gate_kernel), or moe_gate_set_cluster (kernel check).
bool moe_gate_cluster();
void moe_gate_set_cluster(bool on);
// One CTA of the launch moe_gate makes for these arguments (norm: with a MoeGateNorm) where that
// launch is the cluster router, for the launch before it to leave room for (gemv_q8's room); else,
// or with BW24_ROUTER_ROOM=0 in the environment (an A/B switch), an empty room.
cudaError_t moe_gate_room(uint32_t type, int n, int n_expert, int64_t cols, int k, bool norm, CtaRoom* room);
long moe_gate_cluster_launches();  // how many launches took the cluster kernel (kernel check)
// The cluster's logits handed to CTA 0 one way (st.async on an mbarrier, no cluster barrier), the
// same bits; on by default, BW24_GATE_ONE_WAY=0 in the environment or moe_gate_set_one_way (kernel
// check) for the cluster barrier.
bool moe_gate_one_way();
void moe_gate_set_one_way(bool on);
// The cluster router also takes the norm (with MoeGateNorm): one launch and its boundary fewer a MoE
// layer (the 16 CTAs each hold the whole row, so each sums its squares itself, and each quantizes a
// 128-column slice while CTA 0 routes). Elsewhere, or with BW24_GATE_NORM=0 in the environment
// (moe_gate_set_norm_fused in the kernel check), moe_gate launches rmsnorm_q8 first.
bool moe_gate_norm_fused();
void moe_gate_set_norm_fused(bool on);
long moe_gate_norm_launches();  // how many launches took the cluster kernel with the norm (kernel check)

// The pairs of a prefill pass sorted by expert for the grouped GEMM (cuda/gemm gemm_grouped):
// sorted[offsets[e] ..< offsets[e + 1]] = the pairs p (ids[p] == e) in increasing order;
// tile_start[e] = tiles before expert e's, and tiles[tile_start[e] + i] = {e, offsets[e] + i *
// tile_rows} for each tile_rows rows of expert e. offsets and tile_start have n_expert + 1
// entries, tiles room for pairs / tile_rows + n_expert. One CTA; n_expert <= kMoeMaxExperts.
constexpr int kMoeMaxExperts = 1024;
cudaError_t moe_group(int32_t* sorted, int32_t* offsets, int32_t* tile_start, int2* tiles, const int32_t* ids,
                      int pairs, int n_expert, int tile_rows, cudaStream_t stream);

// x[t][c] += sum_j weights[t k + j] * expert_out[t k + j][c]  (+ sigmoid(shared_gate[t]) *
// shared_out[t][c] when shared_out is non-null). x, shared_out: [n][width].
cudaError_t moe_combine(float* x, const float* expert_out, const float* weights, const float* shared_out,
                        const float* shared_gate, int n, int k, int64_t width, cudaStream_t stream);

}  // namespace bw24::cuda
