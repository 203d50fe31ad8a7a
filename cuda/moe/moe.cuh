// Mixture-of-experts routing and combination on the device (Qwen3-MoE, Qwen3.5-MoE, Qwen3-Next).
// A MoE layer on the CUDA runner (lib/engine/cuda_runner.cpp):
//   router GEMV -> moe_route (softmax, top-k, renormalize) -> ids, weights per (token, slot) pair
//   -> routed gate-up GEMV and routed down GEMV (cuda/gemv GemvRoute: one launch each, grid.y =
//   pairs, expert chosen on the device) -> moe_combine into the residual stream, with the shared
//   expert's sigmoid-gated output where the model has one.
// Everything stays on the device, so the decode step remains one CUDA graph.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

constexpr int kMoeMaxUsed = 16;  // experts per token the route kernel takes

// Per token t (logits [n][n_expert] f32): p = softmax(logits[t]); the k largest (ties: the lower
// expert id, as the CPU reference's partial_sort) in descending order go to ids[t * k + j], their p
// (divided by the sum of the k when renormalize) to weights[t * k + j]. One CTA per token.
cudaError_t moe_route(int32_t* ids, float* weights, const float* logits, int n, int n_expert, int k,
                      bool renormalize, cudaStream_t stream);

// x[t][c] += sum_j weights[t k + j] * expert_out[t k + j][c]  (+ sigmoid(shared_gate[t]) *
// shared_out[t][c] when shared_out is non-null). x, shared_out: [n][width].
cudaError_t moe_combine(float* x, const float* expert_out, const float* weights, const float* shared_out,
                        const float* shared_gate, int n, int k, int64_t width, cudaStream_t stream);

}  // namespace bw24::cuda
