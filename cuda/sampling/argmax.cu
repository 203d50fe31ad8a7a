// Greedy token selection (cuda/sampling/sampling.cuh): 1024 threads a CTA stride over the row with
// float4 loads keeping (value, index) maxima, then a warp and a CTA reduction. Ties go to the
// lower index at every step, so the result equals the sequential scan's. On sm_90 a cluster of
// kClusterCtas CTAs shares the row and CTA 0 reads the others' bests from their shared memory
// (distributed shared memory): one CTA alone took 11.3 us for 151,936 logits (ncu, round 11), about
// ten rounds of L2 loads one SM issues; eight SMs issue the same loads in about two rounds.
#include <cooperative_groups.h>

#include "cuda/common/launch.cuh"
#include "cuda/sampling/sampling.cuh"
#include "cuda/sampling/step_next.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 1024;

struct Best {
  float v;
  int32_t i;
};

__device__ __forceinline__ Best better(Best a, Best b) {
  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}

__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Best other{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)};
    b = better(b, other);
  }
  return b;
}

constexpr int kClusterCtas = 8;  // the portable cluster size limit

// The best of thread `first` of `stride` threads over the row (the scan's share of one thread),
// then of its CTA: returned by every thread of warp 0.
__device__ Best cta_best(const float* x, int32_t n, int32_t first, int32_t stride) {
  // The first element of the scan is the starting best, as in the sequential version (a NaN there
  // is never replaced; NaN elsewhere never wins).
  Best b{x[0], 0};
  const bool aligned = (reinterpret_cast<uintptr_t>(x) & 15) == 0;
  const int32_t n4 = aligned ? n / 4 : 0;
  // Four float4 loads in flight per thread: a warp issues in order, and a load followed by the
  // compare that waits for it cost an L2 round trip per step (37 steps for 151936 logits, 13 us).
  constexpr int kLoads = 4;
  for (int32_t k0 = first; k0 < n4; k0 += stride * kLoads) {
    float4 v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int32_t k = k0 + u * stride;
      v[u] = k < n4 ? reinterpret_cast<const float4*>(x)[k] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int32_t k = k0 + u * stride;
      if (k >= n4) break;
      b = better(b, Best{v[u].x, 4 * k});
      b = better(b, Best{v[u].y, 4 * k + 1});
      b = better(b, Best{v[u].z, 4 * k + 2});
      b = better(b, Best{v[u].w, 4 * k + 3});
    }
  }
  for (int32_t k = 4 * n4 + first; k < n; k += stride) b = better(b, Best{x[k], k});
  b = warp_best(b);
  __shared__ Best part[kThreads / 32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = b;
  __syncthreads();
  if (threadIdx.x < 32) b = warp_best(part[threadIdx.x]);
  return b;
}

__global__ void __launch_bounds__(kThreads) argmax_kernel(int32_t* out, const float* x, int32_t n, StepNext next) {
  pdl_begin();
  const Best b = cta_best(x, n, threadIdx.x, kThreads);
  if (threadIdx.x == 0) {
    *out = b.i;
    store_step_next(next, b.i);
  }
}

// A cluster of kClusterCtas CTAs (launched with the cluster attribute, sm_90): CTA r scans the
// float4 steps r kThreads + thread of each round of kClusterCtas kThreads, and CTA 0 folds the
// CTAs' bests in rank order; every CTA waits at the second cluster barrier until CTA 0 has read
// its shared memory. The fold is a reduction under one total order (value, then the lower index),
// so the result is the one-CTA kernel's.
__global__ void __launch_bounds__(kThreads) argmax_cluster_kernel(int32_t* out, const float* x, int32_t n,
                                                                   StepNext next) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  pdl_begin();
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  __shared__ Best mine;
  const Best b = cta_best(x, n, rank * kThreads + static_cast<int32_t>(threadIdx.x), kClusterCtas * kThreads);
  if (threadIdx.x == 0) mine = b;
  cluster.sync();
  if (rank == 0 && threadIdx.x < 32) {
    Best all = *cluster.map_shared_rank(&mine, 0);
    if (threadIdx.x < kClusterCtas) all = *cluster.map_shared_rank(&mine, static_cast<int>(threadIdx.x));
    all = warp_best(all);
    if (threadIdx.x == 0) {
      *out = all.i;
      store_step_next(next, all.i);
    }
  }
  cluster.sync();
#endif
}

}  // namespace

cudaError_t argmax(int32_t* out, const float* x, int32_t n, cudaStream_t stream, const StepNext& next) {
  if (n <= 0) return cudaErrorInvalidValue;
  // Rows of fewer than a round of float4 loads a CTA gain nothing from more CTAs.
  if (!pdl_supported() || n < 4 * kClusterCtas * kThreads)
    return launch_pdl(argmax_kernel, dim3(1), dim3(kThreads), 0, stream, out, x, n, next);
  return launch_pdl_cluster(argmax_cluster_kernel, dim3(kClusterCtas), dim3(kThreads), kClusterCtas, 0, stream, out, x,
                            n, next);
}

}  // namespace bw24::cuda
