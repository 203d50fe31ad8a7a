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
// 1 / sqrt(sum / n + eps): warp sums, then warp 0 over the 8 of them (two barriers).
__device__ __forceinline__ float block_inv_rms(float ss, int n, float eps) {
  ss = warp_sum(ss);
  __shared__ float partial[kRowRmsThreads / 32];
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < kRowRmsThreads / 32 ? partial[threadIdx.x] : 0.0f;
    v = warp_sum(v);
    if (threadIdx.x == 0) partial[0] = v;
  }
  __syncthreads();
  return rsqrtf(partial[0] / n + eps);
}

}  // namespace bw24::cuda
