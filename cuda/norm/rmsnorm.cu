#include "cuda/common/act_q8.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/norm/row_rms.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = kRowRmsThreads;

// 1 / sqrt(mean(x^2) + eps) of one row, every thread of the CTA gets it. Rows of a multiple of 4
// floats (16-byte aligned) as float4 loads, kUnroll of them issued before any is used: a warp
// issues in order, so the scalar loop (a load, then the FMA that waits for it) paid one L2 round
// trip per iteration, 16 of them at n = 4096 (rmsnorm_q8 took 3.1 us, ncu); now one.
__device__ float row_inv_rms(const float* xr, int n, float eps) {
  constexpr int kUnroll = 4;
  float ss = 0.0f;
  if (n % 4 == 0 && (reinterpret_cast<uintptr_t>(xr) & 15) == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const int n4 = n / 4;
    for (int base = 0; base < n4; base += kThreads * kUnroll) {
      float4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kThreads + static_cast<int>(threadIdx.x);
        v[u] = i < n4 ? x4[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) ss += sum_sq4(v[u]);
    }
  } else {
    for (int i = threadIdx.x; i < n; i += kThreads) ss += xr[i] * xr[i];
  }
  return block_inv_rms(ss, n, eps);
}

// Grid (ceil(n / slice), rows): every CTA recomputes the row's sum of squares and writes its
// slice as f32 or bf16 (w null: no norm, a plain conversion) (one CTA per row took 17 us at n = 4096, see rmsnorm_q8_kernel). In place (y == x) the
// launcher makes the slice the whole row: other CTAs' writes would race with a CTA's sum.
constexpr int kNormSlice = 4 * kThreads;
template <typename T>
__global__ void rmsnorm_kernel(T* y, const float* x, const float* w, int n, int slice, float eps, bool one_plus) {
  pdl_begin();
  const float* xr = x + static_cast<size_t>(blockIdx.y) * n;
  T* yr = y + static_cast<size_t>(blockIdx.y) * n;
  const float inv = w ? row_inv_rms(xr, n, eps) : 1.0f;
  const int end = min(n, static_cast<int>(blockIdx.x + 1) * slice);
  for (int i = blockIdx.x * slice + threadIdx.x; i < end; i += kThreads)
    store_as(yr + i, w ? xr[i] * inv * (one_plus ? 1.0f + w[i] : w[i]) : xr[i]);
}

// Grid (n / 256, rows): each CTA quantizes 8 blocks of 32, a warp per block: lane i holds element
// i, the block's max |v| and sum of q come from shuffles. Same rounding as ref::quantize_act_q8
// (IEEE divide, round half to even). With a norm every CTA recomputes the row's sum of squares
// (16 KB from L2 at n = 4096): one CTA per row, as version 1 had, took 17 us at n = 4096 (41 % of
// a Qwen3-8B decode step, ncu); 16 CTAs take a few.
// per256: one scale for the CTA's 256 elements (the max over its 8 warps), written to each of its
// 8 blocks' d (the superblock-wide int8 grouped GEMM applies weight sub-block scales as integers).
__global__ void rmsnorm_q8_kernel(float* y, int8_t* q, float2* ds, const float* x, const float* w, int n, float eps,
                                  bool one_plus, bool per256) {
  const int lane = threadIdx.x % 32;
  const int blk = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
  // The norm weight before the PDL wait (no kernel writes it): its load overlaps the previous
  // kernel instead of adding an L2 round trip after the sum of squares (145 launches per token).
  const float ws = w && blk < n / 32 ? (one_plus ? 1.0f + w[32 * blk + lane] : w[32 * blk + lane]) : 0.0f;
  pdl_begin();
  const size_t r = blockIdx.y;
  const float* xr = x + r * n;
  // The lane's own element loaded beside the sum's loads, not after the sum: read there, its L2
  // round trip (~0.5 us) came after the one the sum of squares waits for.
  const int i = 32 * blk + lane;
  float v = blk < n / 32 ? xr[i] : 0.0f;
  const float inv = w ? row_inv_rms(xr, n, eps) : 1.0f;
  if (blk < n / 32) {
    if (w) v = v * inv * ws;
    if (y) y[r * n + i] = v;
    float amax = warp_max_abs(v);
    if (per256) {  // n % 256 == 0 (the launcher checks): every warp of the CTA is here
      __shared__ float warp_amax[kThreads / 32];
      if (lane == 0) warp_amax[threadIdx.x / 32] = amax;
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kThreads / 32; ++i) amax = fmaxf(amax, warp_amax[i]);
    }
    store_act_q8(v, amax, &q[r * n + i], &ds[r * (n / 32) + blk]);
  }
}

template <typename T>
cudaError_t launch_rmsnorm(T* y, const float* x, const float* w, int rows, int n, int slice, float eps, bool one_plus,
                           cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  const unsigned slices = static_cast<unsigned>((n + slice - 1) / slice);
  return launch_pdl(rmsnorm_kernel<T>, dim3(slices, rows), dim3(kThreads), 0, stream, y, x, w, n, slice, eps, one_plus);
}

}  // namespace

cudaError_t rmsnorm(float* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                    cudaStream_t stream) {
  return launch_rmsnorm(y, x, w, rows, n, y == x ? n : kNormSlice, eps, one_plus, stream);
}

cudaError_t rmsnorm_bf16(__nv_bfloat16* y, const float* x, const float* w, int rows, int n, float eps, bool one_plus,
                         cudaStream_t stream) {
  return launch_rmsnorm(y, x, w, rows, n, kNormSlice, eps, one_plus, stream);
}

cudaError_t rmsnorm_q8(float* y, int8_t* q, float2* ds, const float* x, const float* w, int rows, int n, float eps,
                       bool one_plus, cudaStream_t stream, bool per256) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  static_assert(kThreads == 256, "per256: a CTA is one 256-element block");
  if (n % 32 != 0 || (per256 && n % 256 != 0)) return cudaErrorInvalidValue;
  const unsigned ctas = static_cast<unsigned>((n / 32 + kThreads / 32 - 1) / (kThreads / 32));
  return launch_pdl(rmsnorm_q8_kernel, dim3(ctas, rows), dim3(kThreads), 0, stream, y, q, ds, x, w, n, eps, one_plus,
                    per256);
}

}  // namespace bw24::cuda
