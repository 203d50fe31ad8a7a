#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/common/float_rows.cuh"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/gemv/q8_common.cuh"

namespace bw24::cuda {
namespace {

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

// A routed launch (gemv.cuh GemvRoute): pair blockIdx.y's expert matrix, input row and output row.
// Called after pdl_begin(): the ids come from the previous kernel.
template <typename XPtr>  // const float* or const float* __restrict__
__device__ __forceinline__ void take_route(const GemvRoute& r, const uint8_t*& w, XPtr& x, float*& y, int64_t rows,
                                           int64_t cols) {
  if (!r.ids) return;
  w += int64_t{r.ids[blockIdx.y]} * r.expert_bytes;
  x += int64_t{blockIdx.y / r.x_div} * cols;
  y += int64_t{blockIdx.y} * rows;
}

// Every GEMV ends the same way: each token's per-lane partial sums reduced across the warp, lane 0
// writes (or adds to) y[t][row]. An add reads every token's old value before the first store (in
// the store loop each read would wait for the stores before it: nt - 1 dependent L2 round trips).
__device__ __forceinline__ void store_row(const float* acc, int nt, int lane, int64_t row, int64_t rows, float* y,
                                          bool add) {
  float old[kGemvMaxTokens] = {};
  if (add && lane == 0) {
#pragma unroll
    for (int t = 0; t < kGemvMaxTokens; ++t)
      if (t < nt) old[t] = y[t * rows + row];
  }
#pragma unroll
  for (int t = 0; t < kGemvMaxTokens; ++t) {
    if (t < nt) {
      const float v = warp_sum(acc[t]);
      if (lane == 0) y[t * rows + row] = add ? old[t] + v : v;
    }
  }
}

// Version 2: lanes split each row so a warp's loads are contiguous 16-byte loads. Napkin math: a
// warp reads 32 x 16 B = 512 B per load instruction; 8 warps per CTA and ~8 CTAs per SM keep ~32 KB
// of weight loads outstanding per SM (kernels-hopper.md §1.2). A 16-byte load holds 8 BF16 / F16
// weights (a warp step covers 256 columns) or 4 F32 weights (128 columns; the MoE routers, which
// GGUFs keep in F32: version 1's 4-byte loads took 30 us per Qwen3-30B-A3B router, ncu).
template <uint32_t kType, int nt>
__global__ void gemv_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x, float* y,
                        bool add, GemvRoute route) {
  constexpr int kElemBytes = kType == kF32 ? 4 : 2, kPer = 16 / kElemBytes, kStepCols = 32 * kPer;
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row < rows && !route.ids) prefetch_l2(w + row * cols * kElemBytes, cols * kElemBytes, lane);
  pdl_begin();
  take_route(route, w, x, y, rows, cols);
  const uint8_t* wr = w + row * cols * kElemBytes;
  if (row >= rows) return;
  float acc[nt] = {};
  constexpr int kDepth = 4;  // 16-byte loads in flight per lane
  for (int64_t cb = kPer * lane; cb < cols; cb += kStepCols * kDepth) {
    uint4 vs[kDepth];
#pragma unroll
    for (int u = 0; u < kDepth; ++u)
      if (cb + kStepCols * u < cols) vs[u] = *reinterpret_cast<const uint4*>(wr + (cb + kStepCols * u) * kElemBytes);
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const int64_t c0 = cb + kStepCols * u;
      if (c0 >= cols) break;
      float wf[kPer];
      widen16<kElemBytes, kType == kBF16>(vs[u], wf);
      dot_tokens<kPer, nt>(wf, x, cols, c0, acc);
    }
  }
  store_row(acc, nt, lane, row, rows, y, add);
}

template <typename Fmt>
__global__ void gemv_kernel(const uint8_t* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, bool add,
                            GemvRoute route) {
  pdl_begin();
  take_route(route, w, x, y, rows, cols);
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
cudaError_t launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, bool add, dim3 grid,
                   const GemvRoute& route, cudaStream_t s) {
  if (cols % Fmt::kElems != 0) return cudaErrorInvalidValue;
  return launch_pdl(gemv_kernel<Fmt>, grid, dim3(32 * kWarpsPerCta), 0, s, static_cast<const uint8_t*>(w), rows, cols,
                    x, nt, y, add, route);
}

template <int nt>
cudaError_t launch_v2(uint32_t type, const uint8_t* w, int64_t rows, int64_t cols, const float* x, float* y, bool add,
                      dim3 grid, const GemvRoute& route, cudaStream_t s) {
  const dim3 threads(32 * kWarpsPerCta);
  if (type == kBF16) return launch_pdl(gemv_v2<kBF16, nt>, grid, threads, 0, s, w, rows, cols, x, y, add, route);
  if (type == kF16) return launch_pdl(gemv_v2<kF16, nt>, grid, threads, 0, s, w, rows, cols, x, y, add, route);
  return launch_pdl(gemv_v2<kF32, nt>, grid, threads, 0, s, w, rows, cols, x, y, add, route);
}

// One-token F16 / BF16 segments on sm_90: the streamed kernel (gemv_stream.cu) where it takes them
// (*taken; the return value is then the launch's).
cudaError_t stream_float(const GemvSegment* segs, int n_segs, uint32_t type, int64_t cols, const float* x,
                         GemvOut out, cudaStream_t s, bool* taken) {
  *taken = false;
  if ((type != kF16 && type != kBF16) || !gemv_q8_streamed() || !pdl_supported()) return cudaSuccess;
  gemv_detail::Segments seg{};
  for (int i = 0; i < n_segs; ++i)
    seg.w[i] = static_cast<const uint8_t*>(segs[i].w), seg.y[i] = segs[i].y, seg.rows[i] = segs[i].rows;
  seg.n = n_segs;
  return gemv_detail::gemv_stream_float(seg, type, cols, x, out, s, taken);
}

}  // namespace

bool gemv_supports(uint32_t t) {
  return t == kF32 || t == kF16 || t == kBF16;
}

// The dispatch table of the family: one entry per format.
cudaError_t gemv(const void* w, uint32_t type, int64_t rows, int64_t cols, const float* x, int nt, float* y,
                 GemvOut out, cudaStream_t s, const GemvRoute* route) {
  if (out == GemvOut::kGateUp) return cudaErrorInvalidValue;  // the int8 path only
  const bool add = out == GemvOut::kAdd;
  if (nt < 1 || nt > kGemvMaxTokens || rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const GemvRoute r = route ? *route : GemvRoute{};
  if (r.ids && (nt != 1 || r.pairs < 1 || r.pairs > 65535 || r.x_div < 1))
    return cudaErrorInvalidValue;
  // Version 2 where the shape allows (rows of whole 16-byte loads, aligned). The token
  // count is a template parameter: with a runtime count the accumulators went to local memory.
  const dim3 grid(static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta), r.ids ? unsigned(r.pairs) : 1u);
  const auto* wb = static_cast<const uint8_t*>(w);
  // One-token F16 / BF16 launches on sm_90: the streamed kernel (gemv_stream.cu).
  if (nt == 1 && !r.ids) {
    const GemvSegment seg{w, y, rows};
    bool taken = false;
    const cudaError_t e = stream_float(&seg, 1, type, cols, x, out, s, &taken);
    if (taken) return e;
  }
  const bool v2 = (type == kBF16 || type == kF16 || type == kF32) && cols % (type == kF32 ? 4 : 8) == 0 &&
                  reinterpret_cast<uintptr_t>(w) % 16 == 0 && r.expert_bytes % 16 == 0;
  if (v2) {
    switch (nt) {
      case 1: return launch_v2<1>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 2: return launch_v2<2>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 3: return launch_v2<3>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 4: return launch_v2<4>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 5: return launch_v2<5>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 6: return launch_v2<6>(type, wb, rows, cols, x, y, add, grid, r, s);
      case 7: return launch_v2<7>(type, wb, rows, cols, x, y, add, grid, r, s);
      default: return launch_v2<8>(type, wb, rows, cols, x, y, add, grid, r, s);
    }
  }
  switch (type) {
    case kF32: return launch<F32Fmt>(w, rows, cols, x, nt, y, add, grid, r, s);
    case kF16: return launch<F16Fmt>(w, rows, cols, x, nt, y, add, grid, r, s);
    case kBF16: return launch<BF16Fmt>(w, rows, cols, x, nt, y, add, grid, r, s);
    default: return cudaErrorInvalidValue;
  }
}

// Q, K and V of an F16 / BF16 model in one streamed launch (one token, sm_90): the K and V
// projections alone are 128 row groups each (1024 x 4096 on Qwen3-8B), so 128 CTAs, one a SM,
// each walking its 16 K chunks through a 3-stage ring: 14 us for 8.4 MB (0.6 TB/s, ncu), and
// Q 22 us, 50 us in all for 50 MB. Together they are 768 row groups over the whole grid. Each row
// is summed as in its own launch (a row's chunks in order, one warp), so the outputs are the same
// bits. Other shapes, types and token counts: one launch a segment.
cudaError_t gemv_multi(const GemvSegment* segs, int n_segs, uint32_t type, int64_t cols, const float* x, int nt,
                       GemvOut out, cudaStream_t s) {
  if (n_segs < 1 || n_segs > kMaxGemvSegments || out == GemvOut::kGateUp) return cudaErrorInvalidValue;
  for (int i = 0; i < n_segs; ++i)
    if (!segs[i].w || !segs[i].y || segs[i].rows <= 0) return cudaErrorInvalidValue;
  if (nt == 1 && n_segs > 1) {
    bool taken = false;
    const cudaError_t e = stream_float(segs, n_segs, type, cols, x, out, s, &taken);
    if (taken) return e;
  }
  for (int i = 0; i < n_segs; ++i) {
    const cudaError_t e = gemv(segs[i].w, type, segs[i].rows, cols, x, nt, segs[i].y, out, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace bw24::cuda
