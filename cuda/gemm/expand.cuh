// Eight weights of a K-quant block from bytes already at hand, shared by the bf16 expansion
// (cuda/gemm/dequant.cu, bytes from global memory) and the GEMM's fused B-tile expansion
// (cuda/gemm/gemm.cu, bytes staged in shared memory by cp.async): one expression for both, so the
// fused GEMM sees bit-identical bf16 weights (bw24-kernel-check compares the two).
#pragma once

#include <cstdint>

#include "cuda/common/check.cuh"
#include "cuda/common/q6k_tiles.cuh"

namespace bw24::cuda {

// Q4_K file layout [d, dmin | scales[12] | qs[128]]: head = the block's first 16 bytes, q = 8
// bytes of qs holding sub-block s's elements (low nibbles for even s, high for odd):
// w = d sc_s q - dmin m_s.
// The arithmetic, from the head's fields (d and dmin as floats, sub-block s's 6-bit scale and min);
// qh: Q5_K's 8 fifth-bit bytes (bit s), or null for Q4_K.
__device__ __forceinline__ void q4k_apply8(float dh, float dminh, int scale, int mn, const uint8_t* q, int s, float* v,
                                           const uint8_t* qh = nullptr) {
  const float d = dh * scale, m = dminh * mn;
  const int shift = 4 * (s % 2);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = d * (((q[j] >> shift) & 15) | (qh ? ((qh[j] >> s) & 1) << 4 : 0)) - m;
}
// head in memory (the fused GEMM's shared-memory staging).
__device__ __forceinline__ void q4k_expand8(const uint8_t* head, const uint8_t* q, int s, float* v) {
  int scale, mn;
  scale_min_k4(s, head + 4, &scale, &mn);
  q4k_apply8(half_at(head), half_at(head + 2), scale, mn, q, s, v);
}
// head in registers (a 16-byte load): byte arrays indexed by s would put it in local memory. With
// qh, Q5_K (the same head and arithmetic, plus the fifth bits).
__device__ __forceinline__ void q4k_expand8(uint4 head, const uint8_t* q, int s, float* v, const uint8_t* qh = nullptr) {
  int scale, mn;
  scale_min_k4_regs(s, head.y, head.z, head.w, &scale, &mn);
  q4k_apply8(half_lo(head.x), half_hi(head.x), scale, mn, q, s, v, qh);
}

// Q6_K planes: eight elements of sub-block s = 4 half + j from 8 bytes of ql (nibble j / 2) and
// of qh (bits 2j), scaled by d_sc = d * the 16-element scale: w = d_sc (q - 32).
__device__ __forceinline__ void q6k_expand8(const uint8_t* ql, const uint8_t* qh, int j, float d_sc, float* v) {
#pragma unroll
  for (int k = 0; k < 8; ++k) v[k] = d_sc * ((((ql[k] >> (4 * (j / 2))) & 15) | (((qh[k] >> (2 * j)) & 3) << 4)) - 32);
}

}  // namespace bw24::cuda
