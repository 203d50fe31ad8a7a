// One residual value of a MoE layer's combine: x + sum_j w_j v_j (j = 0 .. k-1, in order), then
// + sigmoid(g) s where the model has a shared expert. Both kernels that combine call it:
// moe_combine (cuda/moe/moe.cu, expert outputs read back from memory) and the routed down GEMV's
// combining epilogue (cuda/gemv/gemv_q8.cu, gemv_q8_combine: the values straight from its warps),
// so the two give the same bits. The rounded intrinsics keep nvcc from contracting a product and
// its add into an FMA in one kernel and not in the other. Internal to cuda/.
#pragma once

#include <math.h>

#include "cuda/moe/moe.cuh"

namespace bw24::cuda {

// v(j): the j-th expert's value; w: the token's k routing weights; shared: the shared expert's
// value or null, gate its gate logit. The k products are issued together (a fixed-bound,
// predicated loop): in moe_combine, where v reads memory, a load and then the add that waits for
// it cost a round trip per expert (8 for Qwen3-30B-A3B, 6 us per layer, ncu).
template <class Value>
__device__ __forceinline__ float moe_combine_value(float x, const float* w, Value v, int k, const float* shared,
                                                   float gate) {
  float part[kMoeMaxUsed];
#pragma unroll
  for (int j = 0; j < kMoeMaxUsed; ++j) part[j] = j < k ? __fmul_rn(w[j], v(j)) : 0.0f;
  float acc = x;
#pragma unroll
  for (int j = 0; j < kMoeMaxUsed; ++j)
    if (j < k) acc = __fadd_rn(acc, part[j]);
  if (shared) acc = __fadd_rn(acc, __fdiv_rn(*shared, __fadd_rn(1.0f, expf(-gate))));
  return acc;
}

}  // namespace bw24::cuda
