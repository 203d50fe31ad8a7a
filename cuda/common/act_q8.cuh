// The int8 GEMV input (cuda/gemv/gemv.cuh ActQ8) one block of 32 at a time, for the kernels that
// write it: rmsnorm_q8 (cuda/norm), the delta net's fused decode step (cuda/deltanet) and flash
// decode's O writers (cuda/attention), so all
// round exactly as ref::quantize_act_q8 does (IEEE divide, round half to even).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/common/check.cuh"

namespace bw24::cuda {

// A block's scale d from its largest |v|, and the factor its codes are rounded with (v * id).
__device__ __forceinline__ float act_q8_scale(float amax, float* id) {
  const float d = amax / 127.0f;
  *id = d > 0.0f ? 1.0f / d : 0.0f;
  return d;
}

// A warp quantizes one block: lane i holds element i (v) and writes *q; lane 0 writes *ds =
// (d, d * sum q). amax: the largest |v| the block's scale covers (the warp's max, or a wider one).
// The codes' sum by redux.sync (an integer sum: the same value in any order), one instruction on
// the chain that every rmsnorm_q8 launch and flash decode's O writers end with.
__device__ __forceinline__ void store_act_q8(float v, float amax, int8_t* q, float2* ds) {
  float id;
  const float d = act_q8_scale(amax, &id);
  const int qi = __float2int_rn(v * id);
  *q = static_cast<int8_t>(qi);
  const int sum = __reduce_add_sync(0xffffffffu, qi);
  if (threadIdx.x % 32 == 0) *ds = make_float2(d, d * static_cast<float>(sum));
}
// The same with the block's own scale: amax = the warp's largest |v| (rmsnorm_q8 without per256).
__device__ __forceinline__ void store_act_q8(float v, int8_t* q, float2* ds) { store_act_q8(v, warp_max_abs(v), q, ds); }

// The same block with four elements a lane: lanes 8b .. 8b + 7 of the warp hold block b's 32
// elements (lane i: elements 4 (i % 8) .. + 3, v), every lane of the warp takes part. The scale,
// the rounding and the sum are store_act_q8's (a max and an integer sum do not depend on the
// order): the same bits. q: the lane's four codes (4-byte aligned); the block's first lane writes *ds.
__device__ __forceinline__ void store_act_q8x4(const float4& v, int8_t* q, float2* ds) {
  float amax = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
  for (int o = 1; o < 8; o *= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  float id;
  const float d = act_q8_scale(amax, &id);
  const int q0 = __float2int_rn(v.x * id), q1 = __float2int_rn(v.y * id), q2 = __float2int_rn(v.z * id),
            q3 = __float2int_rn(v.w * id);
  *reinterpret_cast<char4*>(q) = make_char4(static_cast<signed char>(q0), static_cast<signed char>(q1),
                                            static_cast<signed char>(q2), static_cast<signed char>(q3));
  int sum = q0 + q1 + q2 + q3;
#pragma unroll
  for (int o = 1; o < 8; o *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x % 8 == 0) *ds = make_float2(d, d * static_cast<float>(sum));
}

}  // namespace bw24::cuda
