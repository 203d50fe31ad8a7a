// Pieces shared by the two int8 GEMV kernels of cuda/gemv: the warp-per-row kernel (gemv_q8.cu,
// every format and token count; its MoE routed forms in gemv_q8_routed.cu) and the streamed one-token kernel
// (gemv_stream.cu, sm_90). Internal to cuda/gemv.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/common/ggml_types.cuh"
#include "cuda/common/q6k_tiles.cuh"
#include "cuda/gemv/gemv.cuh"

namespace bw24::cuda::gemv_detail {

constexpr int kWarpsPerCta = 8;
constexpr int kThreads = 32 * kWarpsPerCta;

__device__ __forceinline__ int dp4a4(int a0, int a1, int a2, int a3, const int4& x, int acc) {
  acc = __dp4a(a0, x.x, acc);
  acc = __dp4a(a1, x.y, acc);
  acc = __dp4a(a2, x.z, acc);
  return __dp4a(a3, x.w, acc);
}
// The same with the weights' bytes unsigned (0..255) and the activations' signed (PTX dp4a.u32.s32;
// CUDA's __dp4a has no mixed overload): a Q4_K high nibble taken in place (byte & 0xF0, 16 x its
// value) needs no shift before the product, one shift of the sum after it.
__device__ __forceinline__ int dp4a_us(int a, int x, int acc) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(x), "r"(acc));
  return d;
}
__device__ __forceinline__ int dp4a4_us(int a0, int a1, int a2, int a3, const int4& x, int acc) {
  acc = dp4a_us(a0, x.x, acc);
  acc = dp4a_us(a1, x.y, acc);
  acc = dp4a_us(a2, x.z, acc);
  return dp4a_us(a3, x.w, acc);
}

// The int8 activation rows into shared memory: n16 int4 of quads (quad i to dst_q[slot(i)]) and
// n16 / 2 (d, d sum q) pairs (pair i to dst_ds[i]). A thread loads up to kAhead quads and their
// pairs before it stores any: one L2 round trip (~0.4 us) between a launch's PDL wait and its first
// sum up to kAhead x kCtaThreads quads (K = 27,648 at 288 threads). A load-then-store loop paid one
// a pass: ptxas peels a remainder loop that runs an iteration at a time, so the streamed kernel's
// K = 12,288 launches (three quads a thread) staged in three round trips, and the pairs loaded in a
// second loop after the quads' stores paid one more. The rounds' bound is the same for the whole
// CTA, and the __syncwarp keeps ptxas from pulling a store (which waits for its load) up among the
// loads. kAhead = 1 is the plain loop (registers for launches whose rows fit one pass).
template <int kCtaThreads, int kAhead, class Slot>
__device__ __forceinline__ void stage_q8_rows(int4* dst_q, float2* dst_ds, const int8_t* q, const float2* ds,
                                              int64_t n16, Slot slot) {
  const int4* src_q = reinterpret_cast<const int4*>(q);
  const int64_t n_pairs = n16 / 2;
  if constexpr (kAhead == 1) {  // a quad and its pair a pass, as many passes as it takes
    for (int64_t i = threadIdx.x; i < n16; i += kCtaThreads) {
      const int4 qv = __ldg(src_q + i);
      const bool pair = i < n_pairs;
      float2 dv{};
      if (pair) dv = __ldg(ds + i);
      dst_q[slot(i)] = qv;
      if (pair) dst_ds[i] = dv;
    }
  } else {
    for (int64_t base = 0; base < n16; base += int64_t{kAhead} * kCtaThreads) {
      int4 qv[kAhead];
      float2 dv[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int64_t i = base + u * kCtaThreads + threadIdx.x;
        if (base + u * kCtaThreads < n16) {  // the same for every thread of the CTA
          if (i < n16) qv[u] = __ldg(src_q + i);
          if (i < n_pairs) dv[u] = __ldg(ds + i);
        }
      }
      __syncwarp();
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int64_t i = base + u * kCtaThreads + threadIdx.x;
        if (base + u * kCtaThreads < n16) {
          if (i < n16) dst_q[slot(i)] = qv[u];
          if (i < n_pairs) dst_ds[i] = dv[u];
        }
      }
    }
  }
}

// Activations of token t: 16 (8) int8 at column c, and block k's (d, d * sum q). Plain (generic)
// loads: x points into shared memory when the CTA staged it there (see the kernel shell).
__device__ __forceinline__ int4 act16(const ActQ8& x, int64_t cols, int t, int64_t c) {
  return *reinterpret_cast<const int4*>(x.q + t * cols + c);
}
__device__ __forceinline__ int2 act8(const ActQ8& x, int64_t cols, int t, int64_t c) {
  return *reinterpret_cast<const int2*>(x.q + t * cols + c);
}
__device__ __forceinline__ float2 act_ds(const ActQ8& x, int64_t cols, int t, int64_t k) {
  return x.ds[t * (cols / 32) + k];
}

// Q6_K: the 16 six-bit weights of one lane from 8 bytes of ql at half n, l0 (a), the 8 at + 32 (b)
// and 8 of qh (h), four per word: q[j] holds elements 128n + 32j + l, l in [l0, l0 + 8) (words k =
// 0, 1: l0 + 4k .. + 3). As signed int8 q - 32, or (kBiased) as the unsigned bytes q in [0, 64),
// with the -32 applied to the integer sums by q6k_lane_dot<true>: __vsub4 is three instructions a
// word on sm_90 (LOP3, IADD3, LOP3), eight words a lane and block, where the biased form pays two
// dp4a and an IMAD a scale group for each token. So the one-token streamed kernel takes the biased
// form and the warp-per-row kernel (up to 8 tokens a weight) the signed one; the integer sums, and
// so the outputs, are the same.
template <bool kBiased>
__device__ __forceinline__ void q6k_unpack(uint2 a, uint2 b, uint2 h, int (&q)[4][2]) {
  constexpr int kLo = 0x0F0F0F0F, kHi = 0x30303030;
  const int av[2] = {static_cast<int>(a.x), static_cast<int>(a.y)};
  const int bv[2] = {static_cast<int>(b.x), static_cast<int>(b.y)};
  const int hv[2] = {static_cast<int>(h.x), static_cast<int>(h.y)};
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    if constexpr (kBiased) {
      q[0][k] = (av[k] & kLo) | ((hv[k] << 4) & kHi);
      q[1][k] = (bv[k] & kLo) | ((hv[k] << 2) & kHi);
      q[2][k] = ((av[k] >> 4) & kLo) | (hv[k] & kHi);
      q[3][k] = ((bv[k] >> 4) & kLo) | ((hv[k] >> 2) & kHi);
    } else {
      q[0][k] = __vsub4((av[k] & kLo) | ((hv[k] << 4) & kHi), 0x20202020);
      q[1][k] = __vsub4((bv[k] & kLo) | ((hv[k] << 2) & kHi), 0x20202020);
      q[2][k] = __vsub4(((av[k] >> 4) & kLo) | (hv[k] & kHi), 0x20202020);
      q[3][k] = __vsub4(((bv[k] >> 4) & kLo) | ((hv[k] >> 2) & kHi), 0x20202020);
    }
  }
}

// One Q6_K lane's 32 weights (q6k_unpack<kBiased>'s q, the four block-of-32 scales s = d sc) times
// its int8 activations x[j] (8 per j) with their scales dx[j]. Biased: sum (q - 32) x = sum q x -
// 32 sum x, the same integer (|sum| < 2^16), so the same float. Both int8 GEMVs sum in this order,
// so their Q6_K outputs are equal bit for bit.
template <bool kBiased>
__device__ __forceinline__ float q6k_lane_dot(const int (&q)[4][2], const float (&s)[4], const int2 (&x)[4],
                                              const float (&dx)[4]) {
  constexpr int kOnes = 0x01010101;
  float v = 0.0f;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (kBiased) {
      const int qx = __dp4a(q[j][1], x[j].y, __dp4a(q[j][0], x[j].x, 0));
      const int sx = __dp4a(kOnes, x[j].y, __dp4a(kOnes, x[j].x, 0));
      v += s[j] * dx[j] * static_cast<float>(qx - 32 * sx);
    } else {
      v += s[j] * dx[j] * static_cast<float>(__dp4a(q[j][1], x[j].y, __dp4a(q[j][0], x[j].x, 0)));
    }
  }
  return v;
}

// Up to kMaxGemvSegments matrices of one format and width in one launch (Q, K and V): CTA c works
// on the first segment whose cta_end exceeds c.
struct Segments {
  const uint8_t* w[kMaxGemvSegments];
  float* y[kMaxGemvSegments];
  int64_t rows[kMaxGemvSegments];
  unsigned cta_end[kMaxGemvSegments];
  int n;
};

// The segment of unit u (a CTA, a row group) of n segments whose units end at end[0], end[1], ...
// By compares and selects over constant indices: a dynamic index into the kernel's parameter struct
// made every thread copy it to local memory first (88-160-byte stack frames in ptxas -v, a local
// round trip ahead of each warp's first weight load).
static_assert(kMaxGemvSegments == 4, "the selects below cover four segments");
__device__ __forceinline__ int segment_of(const unsigned (&end)[kMaxGemvSegments], int n, unsigned u) {
  return (n > 1 && u >= end[0]) + (n > 2 && u >= end[1]) + (n > 3 && u >= end[2]);
}
// field[s] (s < kMaxGemvSegments) by selects; segment_start: the first unit of segment s.
template <typename T>
__device__ __forceinline__ T segment_pick(const T (&field)[kMaxGemvSegments], int s) {
  return s == 0 ? field[0] : s == 1 ? field[1] : s == 2 ? field[2] : field[3];
}
__device__ __forceinline__ unsigned segment_start(const unsigned (&end)[kMaxGemvSegments], int s) {
  return s == 0 ? 0u : s == 1 ? end[0] : s == 2 ? end[1] : end[2];
}

// The streamed kernel takes the launch if it can (sm_90 device checked by the caller, format,
// alignment and shared-memory fit checked here): *taken says whether it did; the return value is
// the launch error when it did.
// q_out / ds_out (a one-token Q4_K / Q5_K gate-up of one segment, rows % 32 == 0, else not taken): the
// output also as the next GEMV's int8 input, rmsnorm_q8's bits without a norm.
// norm_out (a one-token add launch: gemv_q8_add_normed): the output also as the next norm's folded
// int8 input, else not taken. x.norm_parts (a folded input): taken only by the folded instances.
cudaError_t gemv_stream(const Segments& seg, const uint8_t* w2, uint32_t type, int64_t cols, ActQ8 x, GemvOut out,
                        int act, cudaStream_t s, bool* taken, GemvChain chain = GemvChain::kPlain,
                        const CtaRoom& room = {}, int8_t* q_out = nullptr, float2* ds_out = nullptr,
                        const NormOut* norm_out = nullptr);
// Whether gemv_stream has a folded-input instance (ActQ8::norm_parts) for type's `out` launch of rows x cols.
bool stream_takes_folded(uint32_t type, GemvOut out, int64_t rows, int64_t cols);

// The same kernel for one-token F16 / BF16 launches of gemv.cu (f32 activations; store or add),
// one matrix or up to kMaxGemvSegments of one type and width (seg.cta_end unused: the kernel counts row groups).
cudaError_t gemv_stream_float(const Segments& seg, uint32_t type, int64_t cols, const float* x, GemvOut out,
                              cudaStream_t s, bool* taken);

// Between the two files of the warp-per-row int8 kernels: the routed one-token Q4_K gate-up's copy-engine form
// (gemv_q8_routed.cu), which gemv_q8.cu's dispatch takes where gate_up_bulk_takes, and the register kernel's
// one-token gate-up occupancy (gemv_q8.cu; Q4_K, Q5_K, Q6_K, else cudaErrorInvalidValue), which
// gemv_q8_routed_occupancy reports.
bool gate_up_bulk_takes(const GemvSegment& seg, const void* w2, int64_t cols, const GemvRoute& route);
cudaError_t gate_up_bulk_launch(const GemvSegment& seg, const void* w2, int64_t cols, ActQ8 x, int act,
                                const GemvRoute& route, cudaStream_t s);
cudaError_t gate_up_register_occupancy(uint32_t type, int64_t cols, GemvOccupancy* o);

}  // namespace bw24::cuda::gemv_detail
