#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/gemv/gemv.cuh"

namespace bw24::cuda {
namespace {

// ggml type ids (formats.md §2.1) and block geometry of the formats this file handles.
enum : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14, kBF16 = 30 };

__device__ __forceinline__ float half_at(const uint8_t* p) {
  unsigned short h = static_cast<unsigned short>(p[0] | (p[1] << 8));
  return __half2float(__ushort_as_half(h));
}

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
struct Q4_0Fmt {  // d, qs[16]: low nibble element j, high nibble element j + 16; (q - 8) * d
  static constexpr int kElems = 32, kBytes = 18;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b);
    const uint8_t* qs = b + 2;
    for (int t = 0; t < nt; ++t) {
      float s = 0;
      for (int j = 0; j < 16; ++j)
        s += ((qs[j] & 0xF) - 8) * x[t * cols + j] + ((qs[j] >> 4) - 8) * x[t * cols + j + 16];
      acc[t] += d * s;
    }
  }
};
struct Q4_1Fmt {  // d, m, qs[16]; q * d + m
  static constexpr int kElems = 32, kBytes = 20;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b), m = half_at(b + 2);
    const uint8_t* qs = b + 4;
    for (int t = 0; t < nt; ++t) {
      float s = 0, sx = 0;
      for (int j = 0; j < 16; ++j) {
        const float x0 = x[t * cols + j], x1 = x[t * cols + j + 16];
        s += (qs[j] & 0xF) * x0 + (qs[j] >> 4) * x1;
        sx += x0 + x1;
      }
      acc[t] += d * s + m * sx;
    }
  }
};
struct Q5_0Fmt {  // d, qh (u32), qs[16]; 5th bit of element j is bit j of qh; (q - 16) * d
  static constexpr int kElems = 32, kBytes = 22;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b);
    const uint32_t qh = b[2] | (b[3] << 8) | (b[4] << 16) | (static_cast<uint32_t>(b[5]) << 24);
    const uint8_t* qs = b + 6;
    for (int t = 0; t < nt; ++t) {
      float s = 0;
      for (int j = 0; j < 16; ++j) {
        int q0 = ((qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - 16;
        int q1 = ((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16;
        s += q0 * x[t * cols + j] + q1 * x[t * cols + j + 16];
      }
      acc[t] += d * s;
    }
  }
};
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* s, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

constexpr int kWarpsPerCta = 8;

// Every GEMV ends the same way: each token's per-lane partial sums reduced across the warp, lane 0
// writes y[t][row].
__device__ __forceinline__ void store_row(const float* acc, int nt, int lane, int64_t row, int64_t rows, float* y) {
#pragma unroll
  for (int t = 0; t < nt; ++t) {
    float v = warp_sum(acc[t]);
    if (lane == 0) y[t * rows + row] = v;
  }
}

// ---------------------------------------------------------------------------------------------
// Version 2 for the formats of Q4_K_M / Q8_0 / BF16 models: lanes split each block so a warp's
// loads are contiguous (16-byte loads where the layout is 16-byte aligned), many rows in flight.
// Napkin math: a warp reads 32 x 16 B = 512 B per load instruction; 8 warps per CTA and ~8 CTAs
// per SM keep ~32 KB of weight loads outstanding per SM (kernels-hopper.md §1.2).
// ---------------------------------------------------------------------------------------------

// Q4_K: 8 lanes per 144-byte block; lane j loads qs[16j .. 16j+15] (16 B, aligned because blocks
// are 144 = 9 x 16 bytes and qs starts at byte 16): 16 low nibbles of sub-block 2c and 16 high
// nibbles of sub-block 2c+1, c = j / 2. A warp covers 4 blocks (1024 weights) per step.
template <int nt>
__global__ void gemv_q4_k_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x,
                             float* y) {
  const int lane = threadIdx.x % 32, sub = lane % 8, grp = lane / 8;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / 256;
  const uint8_t* wr = w + row * blocks * 144;
  float acc[nt] = {};
  const int c = sub / 2, l0 = 16 * (sub % 2);
  // Bytes in flight: each lane issues the 16-byte loads of kDepth blocks before using any of them
  // (one load per lane in flight left the SMs latency-bound, kernels-hopper.md §1.2).
  constexpr int kDepth = 4;
  for (int64_t b0 = grp; b0 < blocks; b0 += 4 * kDepth) {
    uint4 qvs[kDepth];
    uint4 heads[kDepth];  // d, dmin, scales[12] = the block's first 16 bytes
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const int64_t b = b0 + 4 * u;
      if (b < blocks) {
        qvs[u] = *reinterpret_cast<const uint4*>(wr + b * 144 + 16 + 16 * sub);
        heads[u] = *reinterpret_cast<const uint4*>(wr + b * 144);
      }
    }
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
    const int64_t b = b0 + 4 * u;
    if (b >= blocks) break;
    const uint8_t* blk = reinterpret_cast<const uint8_t*>(&heads[u]);
    const uint4 qv = qvs[u];
    const float d = half_at(blk), dmin = half_at(blk + 2);
    int sc1, m1, sc2, m2;
    scale_min_k4(2 * c, blk + 4, &sc1, &m1);
    scale_min_k4(2 * c + 1, blk + 4, &sc2, &m2);
    const float d1 = d * sc1, d2 = d * sc2, mm1 = dmin * m1, mm2 = dmin * m2;
    const uint8_t* q = reinterpret_cast<const uint8_t*>(&qv);
    for (int t = 0; t < nt; ++t) {
      // 16-byte activation loads: 8 float4 instead of 32 scalar loads per 16 weight bytes.
      const float4* xa4 = reinterpret_cast<const float4*>(x + t * cols + b * 256 + 64 * c + l0);
      const float4* xb4 = xa4 + 8;  // +32 floats
      float s1 = 0, s2 = 0, x1 = 0, x2 = 0;
#pragma unroll
      for (int k4 = 0; k4 < 4; ++k4) {
        const float4 xa = __ldg(xa4 + k4), xb = __ldg(xb4 + k4);
        const float av[4] = {xa.x, xa.y, xa.z, xa.w}, bv[4] = {xb.x, xb.y, xb.z, xb.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          s1 += (q[4 * k4 + k] & 0xF) * av[k];
          s2 += (q[4 * k4 + k] >> 4) * bv[k];
          x1 += av[k];
          x2 += bv[k];
        }
      }
      acc[t] += d1 * s1 + d2 * s2 - mm1 * x1 - mm2 * x2;
    }
    }
  }
  store_row(acc, nt, lane, row, rows, y);
}

// Q6_K: 16 lanes per 210-byte block (not 16-byte aligned: byte loads). Lane j takes half
// n = j / 8 and l in [4 (j % 8), +4): 16 weights from ql'[l], ql'[l + 32], qh'[l].
template <int nt>
__global__ void gemv_q6_k_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x,
                             float* y) {
  const int lane = threadIdx.x % 32, sub = lane % 16, grp = lane / 16;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / 256;
  const uint8_t* wr = w + row * blocks * 210;
  float acc[nt] = {};
  const int half = sub / 8, l0 = 4 * (sub % 8);
  for (int64_t b = grp; b < blocks; b += 2) {
    const uint8_t* blk = wr + b * 210;
    const uint8_t* ql = blk + 64 * half;
    const uint8_t* qh = blk + 128 + 32 * half;
    const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192) + 8 * half;
    const float d = half_at(blk + 208);
    uint8_t a[4], bq[4], h[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      a[k] = ql[l0 + k];
      bq[k] = ql[l0 + 32 + k];
      h[k] = qh[l0 + k];
    }
    const int is = l0 / 16;
    const float s0 = d * sc[is], s2 = d * sc[is + 2], s4 = d * sc[is + 4], s6 = d * sc[is + 6];
    for (int t = 0; t < nt; ++t) {
      const float* xt = x + t * cols + b * 256 + 128 * half + l0;
      const float4 x0 = __ldg(reinterpret_cast<const float4*>(xt)), x1 = __ldg(reinterpret_cast<const float4*>(xt + 32)),
                   x2 = __ldg(reinterpret_cast<const float4*>(xt + 64)), x3 = __ldg(reinterpret_cast<const float4*>(xt + 96));
      const float v0[4] = {x0.x, x0.y, x0.z, x0.w}, v1[4] = {x1.x, x1.y, x1.z, x1.w}, v2[4] = {x2.x, x2.y, x2.z, x2.w},
                  v3[4] = {x3.x, x3.y, x3.z, x3.w};
      float r = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int q1 = ((a[k] & 0xF) | (((h[k] >> 0) & 3) << 4)) - 32;
        const int q2 = ((bq[k] & 0xF) | (((h[k] >> 2) & 3) << 4)) - 32;
        const int q3 = ((a[k] >> 4) | (((h[k] >> 4) & 3) << 4)) - 32;
        const int q4 = ((bq[k] >> 4) | (((h[k] >> 6) & 3) << 4)) - 32;
        r += s0 * q1 * v0[k] + s2 * q2 * v1[k] + s4 * q3 * v2[k] + s6 * q4 * v3[k];
      }
      acc[t] += r;
    }
  }
  store_row(acc, nt, lane, row, rows, y);
}

// Q8_0: 4 lanes per 34-byte block (2-byte aligned): lane j takes 8 int8 weights at 8j.
template <int nt>
__global__ void gemv_q8_0_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x,
                             float* y) {
  const int lane = threadIdx.x % 32, sub = lane % 4, grp = lane / 4;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / 32;
  const uint8_t* wr = w + row * blocks * 34;
  float acc[nt] = {};
  for (int64_t b = grp; b < blocks; b += 8) {
    const uint8_t* blk = wr + b * 34;
    const float d = half_at(blk);
    int8_t q[8];
    const uint16_t* q16 = reinterpret_cast<const uint16_t*>(blk + 2 + 8 * sub);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      uint16_t v = q16[k];
      q[2 * k] = static_cast<int8_t>(v & 0xFF);
      q[2 * k + 1] = static_cast<int8_t>(v >> 8);
    }
    for (int t = 0; t < nt; ++t) {
      const float4* xt = reinterpret_cast<const float4*>(x + t * cols + b * 32 + 8 * sub);
      const float4 xa = __ldg(xt), xb = __ldg(xt + 1);
      acc[t] += d * (q[0] * xa.x + q[1] * xa.y + q[2] * xa.z + q[3] * xa.w + q[4] * xb.x + q[5] * xb.y +
                     q[6] * xb.z + q[7] * xb.w);
    }
  }
  store_row(acc, nt, lane, row, rows, y);
}

// BF16 / F16: each lane loads 8 weights (16 B) per step; a warp covers 256 contiguous columns.
template <bool kBf16, int nt>
__global__ void gemv_16bit_v2(const uint8_t* w, int64_t rows, int64_t cols, const float* __restrict__ x,
                              float* y) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const uint16_t* wr = reinterpret_cast<const uint16_t*>(w) + row * cols;
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
  store_row(acc, nt, lane, row, rows, y);
}

template <typename Fmt>
__global__ void gemv_kernel(const uint8_t* w, int64_t rows, int64_t cols, const float* x, int nt, float* y) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / Fmt::kElems;
  const uint8_t* wr = w + row * blocks * Fmt::kBytes;
  float acc[kGemvMaxTokens] = {};
  for (int64_t b = lane; b < blocks; b += 32) Fmt::dot(wr + b * Fmt::kBytes, x + b * Fmt::kElems, cols, nt, acc);
  store_row(acc, nt, lane, row, rows, y);
}

template <typename Fmt>
cudaError_t launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, cudaStream_t s) {
  if (cols % Fmt::kElems != 0) return cudaErrorInvalidValue;
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta);
  gemv_kernel<Fmt><<<grid, 32 * kWarpsPerCta, 0, s>>>(static_cast<const uint8_t*>(w), rows, cols, x, nt, y);
  return cudaGetLastError();
}

template <int nt>
void launch_v2(uint32_t type, const uint8_t* w, int64_t rows, int64_t cols, const float* x, float* y, unsigned grid,
               cudaStream_t s) {
  constexpr int threads = 32 * kWarpsPerCta;
  switch (type) {
    case kQ4_K: gemv_q4_k_v2<nt><<<grid, threads, 0, s>>>(w, rows, cols, x, y); break;
    case kQ6_K: gemv_q6_k_v2<nt><<<grid, threads, 0, s>>>(w, rows, cols, x, y); break;
    case kQ8_0: gemv_q8_0_v2<nt><<<grid, threads, 0, s>>>(w, rows, cols, x, y); break;
    case kBF16: gemv_16bit_v2<true, nt><<<grid, threads, 0, s>>>(w, rows, cols, x, y); break;
    default: gemv_16bit_v2<false, nt><<<grid, threads, 0, s>>>(w, rows, cols, x, y); break;
  }
}

}  // namespace

bool gemv_supports(uint32_t t) {
  return t == kF32 || t == kF16 || t == kBF16 || t == kQ4_0 || t == kQ4_1 || t == kQ5_0 || t == kQ8_0 ||
         t == kQ4_K || t == kQ6_K;
}

// The dispatch table of the family: one entry per format.
cudaError_t gemv(const void* w, uint32_t type, int64_t rows, int64_t cols, const float* x, int nt, float* y,
                 cudaStream_t s) {
  if (nt < 1 || nt > kGemvMaxTokens || rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  // Version 2 where it exists and the shape allows (16-bit rows a multiple of 8 columns). The token
  // count is a template parameter: with a runtime count the accumulators went to local memory.
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta);
  const auto* wb = static_cast<const uint8_t*>(w);
  const bool v2 = (type == kQ4_K && cols % 256 == 0) || (type == kQ6_K && cols % 256 == 0) ||
                  (type == kQ8_0 && cols % 32 == 0) ||
                  ((type == kBF16 || type == kF16) && cols % 8 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0);
  if (v2) {
    switch (nt) {
      case 1: launch_v2<1>(type, wb, rows, cols, x, y, grid, s); break;
      case 2: launch_v2<2>(type, wb, rows, cols, x, y, grid, s); break;
      case 3: launch_v2<3>(type, wb, rows, cols, x, y, grid, s); break;
      case 4: launch_v2<4>(type, wb, rows, cols, x, y, grid, s); break;
      case 5: launch_v2<5>(type, wb, rows, cols, x, y, grid, s); break;
      case 6: launch_v2<6>(type, wb, rows, cols, x, y, grid, s); break;
      case 7: launch_v2<7>(type, wb, rows, cols, x, y, grid, s); break;
      default: launch_v2<8>(type, wb, rows, cols, x, y, grid, s); break;
    }
    return cudaGetLastError();
  }
  switch (type) {
    case kF32: return launch<F32Fmt>(w, rows, cols, x, nt, y, s);
    case kF16: return launch<F16Fmt>(w, rows, cols, x, nt, y, s);
    case kBF16: return launch<BF16Fmt>(w, rows, cols, x, nt, y, s);
    case kQ4_0: return launch<Q4_0Fmt>(w, rows, cols, x, nt, y, s);
    case kQ4_1: return launch<Q4_1Fmt>(w, rows, cols, x, nt, y, s);
    case kQ5_0: return launch<Q5_0Fmt>(w, rows, cols, x, nt, y, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
