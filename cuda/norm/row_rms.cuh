// The pieces of a row's 1 / sqrt(mean(x^2) + eps) that rmsnorm_q8 (cuda/norm/rmsnorm.cu) and the MoE
// router's norm fold (cuda/moe/moe.cu, gate_cluster_kernel) share, so both give the same bits: a
// thread's sum of squares of a float4, then the 256-thread CTA's sum and the inverse root.
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/check.cuh"

namespace bw24::cuda {

constexpr int kRowRmsThreads = 256;  // the CTA size block_inv_rms reduces over

__device__ __forceinline__ float sum_sq4(const float4& v) { return v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w; }

// ss: this thread's part of the row's sum of squares. Every thread of the 256 gets the row's
// 1 / sqrt(sum / n + eps): warp sums, then each thread adds the 8 of them itself in the order in
// which warp_sum's tree would over lanes 0..7 (lanes 8..31 zero: adding +0 to a sum of squares is
// exact), so the same bits with one barrier: before, warp 0 summed them and handed the total back
// through shared memory, a second barrier and five more shuffles on every norm's chain. With
// store_act_q8's redux.sync (act_q8.cuh), H200 tg128, alternated (next309): Qwen3-8B Q4_K_M 595.0 /
// 595.3 -> 598.2 / 597.5 tok/s, Qwen3-30B-A3B 665.9 / 664.2 -> 675.9 / 674.7 (its router's norm
// fold runs this too), Qwen3.5-9B 573.3 -> 578.7.
__device__ __forceinline__ float block_inv_rms(float ss, int n, float eps) {
  ss = warp_sum(ss);
  __shared__ alignas(16) float partial[kRowRmsThreads / 32];
  static_assert(kRowRmsThreads / 32 == 8, "the tree below adds eight warp sums");
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  const float4 a = *reinterpret_cast<const float4*>(&partial[0]), b = *reinterpret_cast<const float4*>(&partial[4]);
  // warp_sum's steps 4, 2, 1 as lane 0 takes them: (p0 + p4) + (p2 + p6), then + (p1 + p5) + (p3 + p7)
  const float total = ((a.x + b.x) + (a.z + b.z)) + ((a.y + b.y) + (a.w + b.w));
  return rsqrtf(total / n + eps);
}

}  // namespace bw24::cuda
