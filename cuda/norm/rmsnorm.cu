#include "cuda/common/check.cuh"
#include "cuda/norm/rmsnorm.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rmsnorm_kernel(float* y, const float* x, const float* w, int n, float eps, bool one_plus) {
  const float* xr = x + static_cast<size_t>(blockIdx.x) * n;
  float* yr = y + static_cast<size_t>(blockIdx.x) * n;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < n; i += kThreads) ss += xr[i] * xr[i];
  ss = warp_sum(ss);
  __shared__ float partial[kThreads / 32];
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < kThreads / 32 ? partial[threadIdx.x] : 0.0f;
    v = warp_sum(v);
    if (threadIdx.x == 0) partial[0] = v;
  }
  __syncthreads();
  const float inv = rsqrtf(partial[0] / n + eps);
  for (int i = threadIdx.x; i < n; i += kThreads) yr[i] = xr[i] * inv * (one_plus ? 1.0f + w[i] : w[i]);
}

}  // namespace

cudaError_t rmsnorm(float* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                    cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  rmsnorm_kernel<<<rows, kThreads, 0, stream>>>(y, x, w, n, eps, one_plus);
  return cudaGetLastError();
}

}  // namespace bw24::cuda
