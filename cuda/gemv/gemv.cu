#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/gemv/gemv.cuh"

namespace bw24::cuda {
namespace {

// ggml type ids (formats.md §2.1) of the formats this file handles.
enum : uint32_t { kF32 = 0, kF16 = 1, kBF16 = 30 };

// Each Format::dot adds W_block . x_block for every token into acc; x points at the block's first
// column of token 0, and token t's copy is x + t * cols.
struct F32Fmt {
  static constexpr int kElems = 1, kBytes = 4;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    float w = *reinterpret_cast<const float*>(b);
    for (int t = 0; t < nt; ++t) acc[t] += w * x[t * cols];
  }
};
struct F16Fmt {
  static constexpr int kElems = 1, kBytes = 2;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    float w = half_at(b);
    for (int t = 0; t < nt; ++t) acc[t] += w * x[t * cols];
  }
};
struct BF16Fmt {
  static constexpr int kElems = 1, kBytes = 2;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    float w = __uint_as_float(static_cast<unsigned>(b[0] | (b[1] << 8)) << 16);
    for (int t = 0; t < nt; ++t) acc[t] += w * x[t * cols];
  }
};
constexpr int kWarpsPerCta = 8;

// Every GEMV ends the same way: each token's per-lane partial sums reduced across the warp, lane 0
// writes (or adds to) y[t][row].
__device__ __forceinline__ void store_row(const float* acc, int nt, int lane, int64_t row, int64_t rows, float* y,
                                          bool add) {
#pragma unroll
  for (int t = 0; t < nt; ++t) {
    float v = warp_sum(acc[t]);
    if (lane == 0) y[t * rows + row] = add ? y[t * rows + row] + v : v;
  }
}

// Version 2 for 16-bit weights: lanes split each row so a warp's loads are contiguous 16-byte
// loads. Napkin math: a warp reads 32 x 16 B = 512 B per load instruction; 8 warps per CTA and ~8
// CTAs per SM keep ~32 KB of weight loads outstanding per SM (kernels-hopper.md §1.2).
// BF16 / F16: each lane loads 8 weights (16 B) per step; a warp covers 256 contiguous columns.
template <bool kBf16, int nt>
__global__ void gemv_16bit_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x,
                              float* y, bool add) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  const uint16_t* wr = reinterpret_cast<const uint16_t*>(w) + row * cols;
  if (row < rows) prefetch_l2(wr, cols * 2, lane);
  pdl_begin();
  if (row >= rows) return;
  float acc[nt] = {};
  constexpr int kDepth = 4;  // 16-byte loads in flight per lane
  for (int64_t cb = 8 * lane; cb < cols; cb += 256 * kDepth) {
    uint4 vs[kDepth];
#pragma unroll
    for (int u = 0; u < kDepth; ++u)
      if (cb + 256 * u < cols) vs[u] = *reinterpret_cast<const uint4*>(wr + cb + 256 * u);
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
    const int64_t c0 = cb + 256 * u;
    if (c0 >= cols) break;
    const uint4 v = vs[u];
    const uint16_t* h = reinterpret_cast<const uint16_t*>(&v);
    float wf[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      wf[k] = kBf16 ? __uint_as_float(static_cast<unsigned>(h[k]) << 16) : __half2float(__ushort_as_half(h[k]));
    for (int t = 0; t < nt; ++t) {
      const float4* xt = reinterpret_cast<const float4*>(x + t * cols + c0);
      const float4 xa = __ldg(xt), xb = __ldg(xt + 1);
      acc[t] += wf[0] * xa.x + wf[1] * xa.y + wf[2] * xa.z + wf[3] * xa.w + wf[4] * xb.x + wf[5] * xb.y +
                wf[6] * xb.z + wf[7] * xb.w;
    }
    }
  }
  store_row(acc, nt, lane, row, rows, y, add);
}

template <typename Fmt>
__global__ void gemv_kernel(const uint8_t* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, bool add) {
  pdl_begin();
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / Fmt::kElems;
  const uint8_t* wr = w + row * blocks * Fmt::kBytes;
  float acc[kGemvMaxTokens] = {};
  for (int64_t b = lane; b < blocks; b += 32) Fmt::dot(wr + b * Fmt::kBytes, x + b * Fmt::kElems, cols, nt, acc);
  store_row(acc, nt, lane, row, rows, y, add);
}

template <typename Fmt>
cudaError_t launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, bool add,
                   cudaStream_t s) {
  if (cols % Fmt::kElems != 0) return cudaErrorInvalidValue;
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta);
  return launch_pdl(gemv_kernel<Fmt>, dim3(grid), dim3(32 * kWarpsPerCta), 0, s, static_cast<const uint8_t*>(w), rows, cols,
                    x, nt, y, add);
}

template <int nt>
cudaError_t launch_v2(uint32_t type, const uint8_t* w, int64_t rows, int64_t cols, const float* x, float* y, bool add,
                      unsigned grid, cudaStream_t s) {
  const dim3 threads(32 * kWarpsPerCta);
  if (type == kBF16) return launch_pdl(gemv_16bit_v2<true, nt>, dim3(grid), threads, 0, s, w, rows, cols, x, y, add);
  return launch_pdl(gemv_16bit_v2<false, nt>, dim3(grid), threads, 0, s, w, rows, cols, x, y, add);
}

}  // namespace

bool gemv_supports(uint32_t t) {
  return t == kF32 || t == kF16 || t == kBF16;
}

// The dispatch table of the family: one entry per format.
cudaError_t gemv(const void* w, uint32_t type, int64_t rows, int64_t cols, const float* x, int nt, float* y,
                 GemvOut out, cudaStream_t s) {
  if (out == GemvOut::kGateUp) return cudaErrorInvalidValue;  // the int8 path only
  const bool add = out == GemvOut::kAdd;
  if (nt < 1 || nt > kGemvMaxTokens || rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  // Version 2 where it exists and the shape allows (16-bit rows a multiple of 8 columns). The token
  // count is a template parameter: with a runtime count the accumulators went to local memory.
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta);
  const auto* wb = static_cast<const uint8_t*>(w);
  const bool v2 = ((type == kBF16 || type == kF16) && cols % 8 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0);
  if (v2) {
    switch (nt) {
      case 1: return launch_v2<1>(type, wb, rows, cols, x, y, add, grid, s);
      case 2: return launch_v2<2>(type, wb, rows, cols, x, y, add, grid, s);
      case 3: return launch_v2<3>(type, wb, rows, cols, x, y, add, grid, s);
      case 4: return launch_v2<4>(type, wb, rows, cols, x, y, add, grid, s);
      case 5: return launch_v2<5>(type, wb, rows, cols, x, y, add, grid, s);
      case 6: return launch_v2<6>(type, wb, rows, cols, x, y, add, grid, s);
      case 7: return launch_v2<7>(type, wb, rows, cols, x, y, add, grid, s);
      default: return launch_v2<8>(type, wb, rows, cols, x, y, add, grid, s);
    }
  }
  switch (type) {
    case kF32: return launch<F32Fmt>(w, rows, cols, x, nt, y, add, s);
    case kF16: return launch<F16Fmt>(w, rows, cols, x, nt, y, add, s);
    case kBF16: return launch<BF16Fmt>(w, rows, cols, x, nt, y, add, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
