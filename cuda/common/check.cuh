// Error plumbing and small device helpers shared by the kernel families: launchers return
// cudaError_t; the host side (lib/, C++) turns it into a status. No exceptions, no aborts in
// device-facing code.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define BW24_CUDA_TRY(expr)                    \
  do {                                         \
    cudaError_t bw24_cuda_err_ = (expr);       \
    if (bw24_cuda_err_ != cudaSuccess) return bw24_cuda_err_; \
  } while (0)

namespace bw24::cuda {

// Sum / max over the 32 lanes of a warp (every lane gets the result).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// warp_sum of each of n values, the n trees side by side: each value summed in warp_sum's order (the
// same bits), its 5 dependent shuffles overlapping the others'. Where a store follows each warp_sum
// (a row's sum into shared memory), ptxas ran the trees one after the other: 5 x ~40 cycles a value
// (the cluster router's 8 rows: 1,909 cycles of products and trees, H200 stamps, round 40).
template <int n>
__device__ __forceinline__ void warp_sum_each(float (&v)[n]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int i = 0; i < n; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// warp_max in one redux.sync (sm_80+) instead of five dependent shuffle-and-fmaxf steps: the float
// bits mapped to unsigned keys that order as the floats do (a non-negative float's bits with the
// sign bit set, a negative float's bits inverted), the unsigned maximum, the map undone. A max is
// exact in any order, so the same value as warp_max for every input without a NaN (a NaN, which
// fmaxf skips, wins here; +0 beats -0). H200, tg128, flash decode's softmax (every path) and its
// inline merge with it (next317, against warp_max): Qwen3-8B Q4_K_M 597.6 / 597.8 -> 599.1 / 598.5,
// Qwen3-30B-A3B 676.2 / 676.9 -> 679.5 / 676.2, at positions 513-640 559.8 -> 560.8 and 622.2 ->
// 624.0. With the MoE routers' max too the 30B lost (676.4 / 676.0 -> 673.8 / 672.9, next315): the
// routers keep warp_max.
__device__ __forceinline__ float warp_max_redux(float v) {
  const unsigned b = __float_as_uint(v);
  const unsigned m = __reduce_max_sync(0xffffffffu, b ^ (b >> 31 ? 0xffffffffu : 0x80000000u));
  return __uint_as_float(m ^ (m >> 31 ? 0x80000000u : 0xffffffffu));
}
// The warp's largest |v|: warp_max_redux without the key map, since |v| >= 0 and non-negative
// floats order as their bit patterns do (a NaN element, which fmaxf would skip, wins here instead).
// rmsnorm_q8's block scales and store_act_q8 (act_q8.cuh).
__device__ __forceinline__ float warp_max_abs(float v) {
  return __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(fabsf(v))));
}

// The fp16 at p (block scales in ggml blocks are only 2-byte aligned).
__device__ __forceinline__ float half_at(const uint8_t* p) {
  return __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(p)));
}

// sigmoid(g) as the attention output gate applies it (sigmoid_mul, and flash decode's O epilogue,
// whose bits must equal it).
__device__ __forceinline__ float sigmoid(float g) { return 1.0f / (1.0f + expf(-g)); }

// The gate activation of a gated MLP: act 0 = SiLU, 1 = tanh GELU (the GEMV's gate-up epilogue and
// the elementwise gated_act apply the same formula).
__device__ __forceinline__ float gate_activation(float g, int act) {
  return act == 0 ? g / (1.0f + expf(-g)) : 0.5f * g * (1.0f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g)));
}

// *p = v in the element type of an output (f32, or bf16 for a GEMM input), for kernels that write
// either.
__device__ __forceinline__ void store_as(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_as(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Sub-block j's 6-bit scale and min of a Q4_K / Q5_K block, from its 12 packed scale bytes s
// (ggml's get_scale_min_k4); the int8 GEMV and the GEMM's weight expansion both read them.
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* s, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// The same from the 12 scale bytes held in three registers (bytes 0-3, 4-7, 8-11): a lane-dependent
// j indexing a byte array of a register-loaded block head would put the head in local memory.
__device__ __forceinline__ void scale_min_k4_regs(int j, uint32_t s0, uint32_t s1, uint32_t s2, int* sc, int* m) {
  auto byte = [&](int k) -> int {
    const uint32_t w = k < 4 ? s0 : k < 8 ? s1 : s2;
    return static_cast<int>((w >> (8 * (k & 3))) & 0xFFu);
  };
  if (j < 4) {
    *sc = byte(j) & 63;
    *m = byte(j + 4) & 63;
  } else {
    *sc = (byte(j + 4) & 0xF) | ((byte(j - 4) >> 6) << 4);
    *m = (byte(j + 4) >> 4) | ((byte(j) >> 6) << 4);
  }
}
// Sub-blocks 2c and 2c + 1 at once (the streamed GEMV's lane c): their scales and mins from the same
// three registers, two bytes per operation and no byte index (rule of scale_min_k4 above).
__device__ __forceinline__ void scale_min_k4_pair(int c, uint32_t s0, uint32_t s1, uint32_t s2, int* sc, int* m) {
  const int sh = 16 * (c & 1);
  const uint32_t p0 = (s0 >> sh) & 0xFFFFu, p1 = (s1 >> sh) & 0xFFFFu, p2 = (s2 >> sh) & 0xFFFFu;
  // Both halves' decode, then a select: c is lane-dependent (c = lane % 4 in the GEMVs), and a branch
  // made the warp run both sides one after the other behind BSSY / BSYNC. H200, tg128 (next166):
  // Qwen3-8B Q4_K_M 534.2 / 531.7 -> 538.0 / 538.1, Qwen3.5-9B 519.3 / 519.7 -> 525.6 / 525.4.
  const bool low = c < 2;
  const uint32_t vs = low ? p0 & 0x3F3Fu : (p2 & 0x0F0Fu) | ((p0 >> 2) & 0x3030u);
  const uint32_t vm = low ? p1 & 0x3F3Fu : ((p2 >> 4) & 0x0F0Fu) | ((p1 >> 2) & 0x3030u);
  sc[0] = static_cast<int>(vs & 0xFFu);
  sc[1] = static_cast<int>(vs >> 8);
  m[0] = static_cast<int>(vm & 0xFFu);
  m[1] = static_cast<int>(vm >> 8);
}
// The fp16 in the low / high half of a register.
__device__ __forceinline__ float half_lo(uint32_t v) { return __half2float(__ushort_as_half(static_cast<unsigned short>(v & 0xFFFFu))); }
__device__ __forceinline__ float half_hi(uint32_t v) { return __half2float(__ushort_as_half(static_cast<unsigned short>(v >> 16))); }

// IQ4_XS / IQ4_NL: four 4-bit codebook indices (the low nibble of each byte of n4) to their int8
// levels {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113} (lib/quant's
// kIq4nlValues), four bytes at once: two byte permutes pick from levels 0-7 and 8-15 by the index's
// low 3 bits, a third picks between them by bit 3 (selector nibbles stay < 8: no sign replication).
__device__ __forceinline__ int iq4_levels(uint32_t n4) {
  constexpr uint32_t kL0 = 0xbfad9881u, kL1 = 0xf6eaddcfu, kL2 = 0x26190d01u, kL3 = 0x71594535u;
  const uint32_t x = n4 & 0x07070707u;
  const uint32_t sel = (x & 0x7u) | ((x >> 4) & 0x70u) | ((x >> 8) & 0x700u) | ((x >> 12) & 0x7000u);
  const uint32_t lo = __byte_perm(kL0, kL1, sel), hi = __byte_perm(kL2, kL3, sel);
  const uint32_t h = (n4 >> 3) & 0x01010101u;
  const uint32_t pick = 0x3210u | ((h & 1u) << 2) | (((h >> 8) & 1u) << 6) | (((h >> 16) & 1u) << 10) |
                        (((h >> 24) & 1u) << 14);
  return static_cast<int>(__byte_perm(lo, hi, pick));
}

// L2 prefetch of bytes [p, p + n) by `lanes` threads (lane 0 .. lanes - 1: the 32 of a warp by
// default, or 1: one thread alone), one 128-byte line per lane and step. The GEMVs issue it for
// their weight rows before pdl_begin() (cuda/common/launch.cuh), while the previous kernel still
// runs: weights depend on nothing; flash decode for its split's cache rows (kv_load.cuh prefetch_kv).
__device__ __forceinline__ void prefetch_l2(const void* p, int64_t n, int lane, int lanes = 32) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + static_cast<uintptr_t>(n);
  for (uintptr_t a = (begin & ~uintptr_t{127}) + 128 * lane; a < end; a += 128 * static_cast<uintptr_t>(lanes))
    asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
}

}  // namespace bw24::cuda
