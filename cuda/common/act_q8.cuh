// The int8 GEMV input (cuda/gemv/gemv.cuh ActQ8) one block of 32 at a time, for the kernels that
// write it: rmsnorm_q8 (cuda/norm), the delta net's fused decode step (cuda/deltanet) and flash
// decode's O writers (cuda/attention), so all
// round exactly as ref::quantize_act_q8 does (IEEE divide, round half to even).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/common/check.cuh"

namespace bw24::cuda {

// A warp quantizes one block: lane i holds element i (v) and writes *q; lane 0 writes *ds =
// (d, d * sum q). amax: the largest |v| the block's scale covers (the warp's max, or a wider one).
__device__ __forceinline__ void store_act_q8(float v, float amax, int8_t* q, float2* ds) {
  const float d = amax / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
  const int qi = __float2int_rn(v * id);
  *q = static_cast<int8_t>(qi);
  const int sum = warp_sum(qi);
  if (threadIdx.x % 32 == 0) *ds = make_float2(d, d * static_cast<float>(sum));
}
// The same with the block's own scale: amax = the warp's largest |v| (rmsnorm_q8 without per256).
__device__ __forceinline__ void store_act_q8(float v, int8_t* q, float2* ds) { store_act_q8(v, warp_max(fabsf(v)), q, ds); }

}  // namespace bw24::cuda
