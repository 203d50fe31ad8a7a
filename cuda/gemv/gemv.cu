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
struct Q8_0Fmt {  // d, int8 qs[32]
  static constexpr int kElems = 32, kBytes = 34;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b);
    const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int t = 0; t < nt; ++t) {
      float s = 0;
      for (int j = 0; j < 32; ++j) s += qs[j] * x[t * cols + j];
      acc[t] += d * s;
    }
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
struct Q4_KFmt {  // d, dmin, scales[12], qs[128]
  static constexpr int kElems = 256, kBytes = 144;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t* q = b + 16;
    for (int c = 0; c < 4; ++c, q += 32) {
      int sc1, m1, sc2, m2;
      scale_min_k4(2 * c, b + 4, &sc1, &m1);
      scale_min_k4(2 * c + 1, b + 4, &sc2, &m2);
      for (int t = 0; t < nt; ++t) {
        const float* xt = x + t * cols + 64 * c;
        float s1 = 0, s2 = 0, x1 = 0, x2 = 0;
        for (int l = 0; l < 32; ++l) {
          s1 += (q[l] & 0xF) * xt[l];
          s2 += (q[l] >> 4) * xt[32 + l];
          x1 += xt[l];
          x2 += xt[32 + l];
        }
        acc[t] += d * (sc1 * s1 + sc2 * s2) - dmin * (m1 * x1 + m2 * x2);
      }
    }
  }
};
struct Q6_KFmt {  // ql[128], qh[64], int8 scales[16], d
  static constexpr int kElems = 256, kBytes = 210;
  __device__ static void dot(const uint8_t* b, const float* x, int64_t cols, int nt, float* acc) {
    const float d = half_at(b + 208);
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = b + 64 * half;
      const uint8_t* qh = b + 128 + 32 * half;
      for (int t = 0; t < nt; ++t) {
        const float* xt = x + t * cols + 128 * half;
        float s = 0;
        for (int l = 0; l < 32; ++l) {
          const int is = 8 * half + l / 16;
          int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
          int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
          int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          s += sc[is] * q1 * xt[l] + sc[is + 2] * q2 * xt[l + 32] + sc[is + 4] * q3 * xt[l + 64] +
               sc[is + 6] * q4 * xt[l + 96];
        }
        acc[t] += d * s;
      }
    }
  }
};

constexpr int kWarpsPerCta = 8;

template <typename Fmt>
__global__ void gemv_kernel(const uint8_t* w, int64_t rows, int64_t cols, const float* x, int nt, float* y) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t blocks = cols / Fmt::kElems;
  const uint8_t* wr = w + row * blocks * Fmt::kBytes;
  float acc[kGemvMaxTokens] = {};
  for (int64_t b = lane; b < blocks; b += 32) Fmt::dot(wr + b * Fmt::kBytes, x + b * Fmt::kElems, cols, nt, acc);
  for (int t = 0; t < nt; ++t) {
    float v = warp_sum(acc[t]);
    if (lane == 0) y[t * rows + row] = v;
  }
}

template <typename Fmt>
cudaError_t launch(const void* w, int64_t rows, int64_t cols, const float* x, int nt, float* y, cudaStream_t s) {
  if (cols % Fmt::kElems != 0) return cudaErrorInvalidValue;
  const unsigned grid = static_cast<unsigned>((rows + kWarpsPerCta - 1) / kWarpsPerCta);
  gemv_kernel<Fmt><<<grid, 32 * kWarpsPerCta, 0, s>>>(static_cast<const uint8_t*>(w), rows, cols, x, nt, y);
  return cudaGetLastError();
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
  switch (type) {
    case kF32: return launch<F32Fmt>(w, rows, cols, x, nt, y, s);
    case kF16: return launch<F16Fmt>(w, rows, cols, x, nt, y, s);
    case kBF16: return launch<BF16Fmt>(w, rows, cols, x, nt, y, s);
    case kQ4_0: return launch<Q4_0Fmt>(w, rows, cols, x, nt, y, s);
    case kQ4_1: return launch<Q4_1Fmt>(w, rows, cols, x, nt, y, s);
    case kQ5_0: return launch<Q5_0Fmt>(w, rows, cols, x, nt, y, s);
    case kQ8_0: return launch<Q8_0Fmt>(w, rows, cols, x, nt, y, s);
    case kQ4_K: return launch<Q4_KFmt>(w, rows, cols, x, nt, y, s);
    case kQ6_K: return launch<Q6_KFmt>(w, rows, cols, x, nt, y, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
