// Error plumbing for device code and launchers: launchers return cudaError_t; the host side
// (lib/, C++) turns it into a status. No exceptions, no aborts in device-facing code.
#pragma once

#include <cuda_runtime.h>

#define BW24_CUDA_TRY(expr)                    \
  do {                                         \
    cudaError_t bw24_cuda_err_ = (expr);       \
    if (bw24_cuda_err_ != cudaSuccess) return bw24_cuda_err_; \
  } while (0)

namespace bw24::cuda {

// Sum over the 32 lanes of a warp (every lane gets the total).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace bw24::cuda
