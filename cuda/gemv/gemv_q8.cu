// Decode GEMV over quantized weights with int8 activations (the dispatch table of the int8 path).
//
// Why int8 activations: the float version of this kernel (kept in git history, docs/performance.md
// rows up to ad32fd67) read 128 bytes of f32 activations per 16 bytes of Q4_K weights and was bound
// by L1 traffic at 12 % of the copy bandwidth (ncu: DRAM 9 %). Quantizing each GEMV input once to
// int8 blocks of 32 (rmsnorm_q8) cuts that to 32 bytes and turns 8 FMAs into one dp4a.
//
// Layouts (lib/quant/repack.h): Q4_K and Q5_K in their file layout (144- and 176-byte blocks are
// 16-byte multiples); Q8_0, Q6_K, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_XS as planes (all quants of all blocks, then
// all scales, ...), so every weight load is an aligned 8- or 16-byte load. gb = row * blocks + b indexes a block in its planes.
//
// Work split: one warp per output row (8 per CTA). Legacy formats: one lane per 32-weight block, a
// warp covers 1024 columns per step. K-quants: 8 lanes per 256-weight block, 4 blocks per step.
// Each lane issues the loads of kDepth steps before using any (bytes in flight,
// kernels-hopper.md §1.2). (Hoisting the first step's loads above the PDL wait measured faster
// for Q8_0 and slower for the K-quants; not kept, docs/performance.md.)
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"
#include "cuda/gemv/gemv.cuh"

namespace bw24::cuda {
namespace {

enum : uint32_t {
  kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kIQ4_XS = 23
};

constexpr int kWarpsPerCta = 8;
constexpr int kThreads = 32 * kWarpsPerCta;

__device__ __forceinline__ int dp4a4(int a0, int a1, int a2, int a3, const int4& x, int acc) {
  acc = __dp4a(a0, x.x, acc);
  acc = __dp4a(a1, x.y, acc);
  acc = __dp4a(a2, x.z, acc);
  return __dp4a(a3, x.w, acc);
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

// ---------------------------------------------------------------------------------------------
// Legacy 32-weight formats. Each provides load() (one block's fields into registers) and dot()
// (the block times 32 activations: xa = columns 0..15, xb = 16..31, ds = their (d, d * sum q)).
// Nibble formats: byte j holds element j (low nibble) and element j + 16 (high nibble).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ int nibble_dot(const uint4& qs, const int4& xa, const int4& xb) {
  constexpr int kLo = 0x0F0F0F0F;
  const int q0 = static_cast<int>(qs.x), q1 = static_cast<int>(qs.y), q2 = static_cast<int>(qs.z),
            q3 = static_cast<int>(qs.w);
  int s = dp4a4(q0 & kLo, q1 & kLo, q2 & kLo, q3 & kLo, xa, 0);
  return dp4a4((q0 >> 4) & kLo, (q1 >> 4) & kLo, (q2 >> 4) & kLo, (q3 >> 4) & kLo, xb, s);
}

struct Q4_0 {  // planes: qs[16] | d. w = (q - 8) * d
  static constexpr int kQuantBytes = 16;
  struct Blk {
    uint4 qs;
    float d;
  };
  __device__ static Blk load(const uint8_t* w, int64_t n, int64_t gb) {
    return {__ldg(reinterpret_cast<const uint4*>(w) + gb), half_at(w + n * 16 + gb * 2)};
  }
  __device__ static float dot(const Blk& b, const int4& xa, const int4& xb, float2 ds) {
    return b.d * (ds.x * nibble_dot(b.qs, xa, xb) - 8.0f * ds.y);
  }
};

struct Q4_1 {  // planes: qs[16] | (d, m). w = q * d + m
  static constexpr int kQuantBytes = 16;
  struct Blk {
    uint4 qs;
    float d, m;
  };
  __device__ static Blk load(const uint8_t* w, int64_t n, int64_t gb) {
    const uint8_t* dm = w + n * 16 + gb * 4;
    return {__ldg(reinterpret_cast<const uint4*>(w) + gb), half_at(dm), half_at(dm + 2)};
  }
  __device__ static float dot(const Blk& b, const int4& xa, const int4& xb, float2 ds) {
    return b.d * ds.x * nibble_dot(b.qs, xa, xb) + b.m * ds.y;
  }
};

// Bits 0..3 of h spread to bit 4 of bytes 0..3 (the fifth bit of four Q5 weights).
__device__ __forceinline__ int fifth_bits(uint32_t h) {
  return static_cast<int>(((h << 4) & 0x10u) | ((h << 11) & 0x1000u) | ((h << 18) & 0x100000u) |
                          ((h << 25) & 0x10000000u));
}

struct Q5_0 {  // planes: qs[16] | qh (u32, bit j = fifth bit of element j) | d. w = (q - 16) * d
  static constexpr int kQuantBytes = 16;
  struct Blk {
    uint4 qs;
    uint32_t qh;
    float d;
  };
  __device__ static Blk load(const uint8_t* w, int64_t n, int64_t gb) {
    return {__ldg(reinterpret_cast<const uint4*>(w) + gb), __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb),
            half_at(w + n * 20 + gb * 2)};
  }
  __device__ static float dot(const Blk& b, const int4& xa, const int4& xb, float2 ds) {
    constexpr int kLo = 0x0F0F0F0F;
    const int q[4] = {static_cast<int>(b.qs.x), static_cast<int>(b.qs.y), static_cast<int>(b.qs.z),
                      static_cast<int>(b.qs.w)};
    int lo[4], hi[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      lo[k] = (q[k] & kLo) | fifth_bits(b.qh >> (4 * k));
      hi[k] = ((q[k] >> 4) & kLo) | fifth_bits(b.qh >> (16 + 4 * k));
    }
    const int s = dp4a4(hi[0], hi[1], hi[2], hi[3], xb, dp4a4(lo[0], lo[1], lo[2], lo[3], xa, 0));
    return b.d * (ds.x * s - 16.0f * ds.y);
  }
};

struct Q5_1 {  // planes: qs[16] | qh (u32) | (d, m). w = q * d + m, q in [0, 31]
  static constexpr int kQuantBytes = 16;
  struct Blk {
    uint4 qs;
    uint32_t qh;
    float d, m;
  };
  __device__ static Blk load(const uint8_t* w, int64_t n, int64_t gb) {
    const uint8_t* dm = w + n * 20 + gb * 4;
    return {__ldg(reinterpret_cast<const uint4*>(w) + gb), __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb),
            half_at(dm), half_at(dm + 2)};
  }
  __device__ static float dot(const Blk& b, const int4& xa, const int4& xb, float2 ds) {
    constexpr int kLo = 0x0F0F0F0F;
    const int q[4] = {static_cast<int>(b.qs.x), static_cast<int>(b.qs.y), static_cast<int>(b.qs.z),
                      static_cast<int>(b.qs.w)};
    int lo[4], hi[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      lo[k] = (q[k] & kLo) | fifth_bits(b.qh >> (4 * k));
      hi[k] = ((q[k] >> 4) & kLo) | fifth_bits(b.qh >> (16 + 4 * k));
    }
    const int s = dp4a4(hi[0], hi[1], hi[2], hi[3], xb, dp4a4(lo[0], lo[1], lo[2], lo[3], xa, 0));
    return b.d * ds.x * s + b.m * ds.y;
  }
};

struct Q8_0 {  // planes: qs[32] (int8) | d. w = q * d
  static constexpr int kQuantBytes = 32;
  struct Blk {
    uint4 lo, hi;
    float d;
  };
  __device__ static Blk load(const uint8_t* w, int64_t n, int64_t gb) {
    const uint4* qs = reinterpret_cast<const uint4*>(w) + 2 * gb;
    return {__ldg(qs), __ldg(qs + 1), half_at(w + n * 32 + gb * 2)};
  }
  __device__ static float dot(const Blk& b, const int4& xa, const int4& xb, float2 ds) {
    int s = dp4a4(b.lo.x, b.lo.y, b.lo.z, b.lo.w, xa, 0);
    s = dp4a4(b.hi.x, b.hi.y, b.hi.z, b.hi.w, xb, s);
    return b.d * ds.x * s;
  }
};

// One lane per block; kDepth blocks per lane loaded before any is used.
template <class F>
struct Legacy {
  static constexpr int kBlockElems = 32;
  __device__ static void prefetch(const uint8_t* w, int64_t, int64_t row, int64_t blocks, int lane) {
    prefetch_l2(w + row * blocks * F::kQuantBytes, blocks * F::kQuantBytes, lane);  // the quant plane
  }
  // kMats matrices (gate and up) of the same shape over the same activations: the loads of all
  // of them are issued before any is used.
  template <int nt, int kMats>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t n_blocks, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr int kDepth = 2;
    for (int64_t b0 = lane; b0 < blocks; b0 += 32 * kDepth) {
      typename F::Blk blk[kMats][kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u)
#pragma unroll
        for (int m = 0; m < kMats; ++m)
          if (b0 + 32 * u < blocks) blk[m][u] = F::load(w[m], n_blocks, row * blocks + b0 + 32 * u);
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 32 * u;
        if (b >= blocks) break;
#pragma unroll
        for (int t = 0; t < nt; ++t) {
          const int4 xa = act16(x, cols, t, 32 * b), xb = act16(x, cols, t, 32 * b + 16);
          const float2 ds = act_ds(x, cols, t, b);
#pragma unroll
          for (int m = 0; m < kMats; ++m) acc[m][t] += F::dot(blk[m][u], xa, xb, ds);
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Q4_K and Q5_K, file layouts (16-byte multiples): 144-byte blocks [d, dmin (fp16) | scales[12]
// (6-bit scale/min pairs) | qs[128]], Q5_K 176 bytes with qh[32] before qs. qs[32c + l] holds
// element 64c + l (low nibble, sub-block 2c) and 64c + 32 + l (high nibble, sub-block 2c + 1);
// Q5_K's fifth bit of element 32 s + l is bit s of qh[l]. Lane (c, h) of a block's 8 loads
// qs[32c + 16h, +16) (and qh[16h, +16)) with one 16-byte load each. w = d sc q - dmin m per
// sub-block, q in [0, 15] / [0, 31].
// ---------------------------------------------------------------------------------------------
template <bool kFifth>
struct KQuant {
  static constexpr int kBlockElems = 256, kBlockBytes = kFifth ? 176 : 144, kQs = kFifth ? 48 : 16;
  // Lane (c, h)'s activations of block b: columns 64c + 16h (+ 32) and sub-blocks 2c, 2c + 1.
  template <int nt>
  struct Act {
    int4 xa[nt], xb[nt];
    float2 ds1[nt], ds2[nt];
  };
  template <int nt>
  __device__ static Act<nt> load_act(const ActQ8& x, int64_t cols, int64_t b, int c, int h) {
    Act<nt> a;
    const int64_t c0 = b * 256 + 64 * c + 16 * h;
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      a.xa[t] = act16(x, cols, t, c0);
      a.xb[t] = act16(x, cols, t, c0 + 32);
      a.ds1[t] = act_ds(x, cols, t, b * 8 + 2 * c);
      a.ds2[t] = act_ds(x, cols, t, b * 8 + 2 * c + 1);
    }
    return a;
  }
  // Lane (c, h)'s part of one block: head = the block's first 16 bytes, qq = its 16 quant bytes,
  // hh = its 16 fifth-bit bytes (Q5_K).
  // hb: the block's first 16 bytes (d, dmin, 12 scale bytes), in shared memory or a register copy.
  // A register copy read as a byte array with a lane-dependent index (scale_min_k4) lives in local
  // memory (64 bytes a thread in the warp-per-row kernel); decoding it from registers instead
  // (scale_min_k4_regs) needed 76 registers, not 60, and a resident CTA per SM less, the cost the
  // int8 GEMV v3 lost to (docs/performance.md). The streamed kernel passes shared memory.
  template <int nt>
  __device__ static void dot(const uint8_t* hb, const uint4& qq, const uint4& hh, const Act<nt>& a, int c, int h,
                             float (&acc)[nt]) {
    constexpr int kLo = 0x0F0F0F0F, kBit = 0x01010101;
    const float d = half_at(hb), dmin = half_at(hb + 2);
    int sc1, m1, sc2, m2;
    scale_min_k4(2 * c, hb + 4, &sc1, &m1);
    scale_min_k4(2 * c + 1, hb + 4, &sc2, &m2);
    const int q[4] = {static_cast<int>(qq.x), static_cast<int>(qq.y), static_cast<int>(qq.z), static_cast<int>(qq.w)};
    int lo[4], hi[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      lo[k] = q[k] & kLo;
      hi[k] = (q[k] >> 4) & kLo;
    }
    if constexpr (kFifth) {
      const int qh[4] = {static_cast<int>(hh.x), static_cast<int>(hh.y), static_cast<int>(hh.z), static_cast<int>(hh.w)};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        lo[k] |= ((qh[k] >> (2 * c)) & kBit) << 4;
        hi[k] |= ((qh[k] >> (2 * c + 1)) & kBit) << 4;
      }
    }
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      const int s1 = dp4a4(lo[0], lo[1], lo[2], lo[3], a.xa[t], 0);
      const int s2 = dp4a4(hi[0], hi[1], hi[2], hi[3], a.xb[t], 0);
      float v = d * (sc1 * a.ds1[t].x * s1 + sc2 * a.ds2[t].x * s2);
      // The min term covers the whole 32-element sub-block: counted once, by the h = 0 lane.
      if (h == 0) v -= dmin * (m1 * a.ds1[t].y + m2 * a.ds2[t].y);
      acc[t] += v;
    }
  }
  __device__ static void prefetch(const uint8_t* w, int64_t, int64_t row, int64_t blocks, int lane) {
    prefetch_l2(w + row * blocks * kBlockBytes, blocks * kBlockBytes, lane);
  }
  template <int nt, int kMats>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr int kDepth = 4 / kMats;
    constexpr int kHv = kFifth ? kMats : 1, kHd = kFifth ? kDepth : 1;  // qh registers only for Q5_K
    const int sub = lane % 8, grp = lane / 8, c = sub / 2, h = sub % 2;
    for (int64_t b0 = grp; b0 < blocks; b0 += 4 * kDepth) {
      uint4 head[kMats][kDepth], qv[kMats][kDepth], hv[kHv][kHd];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u;
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          if (b < blocks) {
            const uint8_t* blk = w[m] + (row * blocks + b) * kBlockBytes;
            head[m][u] = __ldg(reinterpret_cast<const uint4*>(blk));
            if constexpr (kFifth) hv[m][u] = __ldg(reinterpret_cast<const uint4*>(blk + 16 + 16 * h));
            qv[m][u] = __ldg(reinterpret_cast<const uint4*>(blk + kQs + 32 * c + 16 * h));
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u;
        if (b >= blocks) break;
        const Act<nt> a = load_act<nt>(x, cols, b, c, h);
#pragma unroll
        for (int m = 0; m < kMats; ++m) dot<nt>(reinterpret_cast<const uint8_t*>(&head[m][u]), qv[m][u], hv[kFifth ? m : 0][kFifth ? u : 0], a, c, h, acc[m]);
      }
    }
  }
};
using Q4_K = KQuant<false>;
using Q5_K = KQuant<true>;

// ---------------------------------------------------------------------------------------------
// IQ4_XS, planes qs[128] | (d, scales_h, scales_l[4]) (136-byte blocks: not a 16-byte multiple).
// Sub-block ib (elements [32 ib, 32 ib + 32)): qs[16 ib + j] holds element j (low nibble) and
// j + 16 (high), each an index into the 16 non-linear levels (iq4_levels); w = d (ls - 32) level,
// ls the 6-bit scale (4 bits in scales_l, 2 in scales_h). Lane ib of a block's 8 takes sub-block ib
// with one 16-byte load; no min term.
// ---------------------------------------------------------------------------------------------
struct IQ4_XS {
  static constexpr int kBlockElems = 256;
  __device__ static void prefetch(const uint8_t* w, int64_t, int64_t row, int64_t blocks, int lane) {
    prefetch_l2(w + row * blocks * 128, blocks * 128, lane);  // the quant plane
  }
  template <int nt, int kMats>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t n_blocks, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr uint32_t kLo = 0x0F0F0F0Fu;
    constexpr int kDepth = 4 / kMats;
    const int ib = lane % 8, grp = lane / 8;
    for (int64_t b0 = grp; b0 < blocks; b0 += 4 * kDepth) {
      uint4 qv[kMats][kDepth];
      uint2 head[kMats][kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t gb = row * blocks + b0 + 4 * u;
#pragma unroll
        for (int m = 0; m < kMats; ++m)
          if (b0 + 4 * u < blocks) {
            qv[m][u] = __ldg(reinterpret_cast<const uint4*>(w[m] + gb * 128 + 16 * ib));
            head[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + n_blocks * 128 + gb * 8));
          }
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u;
        if (b >= blocks) break;
        const int64_t c0 = b * 256 + 32 * ib;
        int4 xa[nt], xb[nt];
        float dsx[nt];
#pragma unroll
        for (int t = 0; t < nt; ++t) {
          xa[t] = act16(x, cols, t, c0);
          xb[t] = act16(x, cols, t, c0 + 16);
          dsx[t] = act_ds(x, cols, t, b * 8 + ib).x;
        }
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          const uint2 hd = head[m][u];  // [d | scales_h | scales_l[4]], read from registers
          const int scales_h = static_cast<int>(hd.x >> 16);
          const int sl = static_cast<int>((hd.y >> (8 * (ib / 2))) & 0xFFu);
          const int ls = ((sl >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
          const float dl = half_lo(hd.x) * static_cast<float>(ls - 32);
          const uint32_t q[4] = {qv[m][u].x, qv[m][u].y, qv[m][u].z, qv[m][u].w};
          int lo[4], hi[4];
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            lo[k] = iq4_levels(q[k] & kLo);
            hi[k] = iq4_levels((q[k] >> 4) & kLo);
          }
#pragma unroll
          for (int t = 0; t < nt; ++t) {
            const int s = dp4a4(hi[0], hi[1], hi[2], hi[3], xb[t], dp4a4(lo[0], lo[1], lo[2], lo[3], xa[t], 0));
            acc[m][t] += dl * dsx[t] * static_cast<float>(s);
          }
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Q6_K, planes ql[128] | qh[64] | scales[16] (int8) | d. Half n (128 elements) of a block: for l in
// [0, 32), ql[64n + l] low/high nibbles are elements 128n + l / + 64, ql[64n + 32 + l] are + 32 /
// + 96, and qh[32n + l] bits 0-1, 2-3, 4-5, 6-7 are their top two bits; w = d * sc * (q - 32),
// scale index 8n + l / 16 + 2m for the element at + 32m. Lane (n, l0) of a block's 8 takes
// l in [l0, l0 + 8): three 8-byte loads give 32 weights.
// ---------------------------------------------------------------------------------------------
struct Q6_K {
  static constexpr int kBlockElems = 256;
  __device__ static void prefetch(const uint8_t* w, int64_t n_blocks, int64_t row, int64_t blocks, int lane) {
    prefetch_l2(w + row * blocks * 128, blocks * 128, lane);                 // ql
    prefetch_l2(w + n_blocks * 128 + row * blocks * 64, blocks * 64, lane);  // qh
  }
  template <int nt, int kMats>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t n_blocks, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr int kLo = 0x0F0F0F0F, kHi = 0x30303030, kDepth = 4 / kMats;
    const int sub = lane % 8, grp = lane / 8, n = sub / 4, l0 = 8 * (sub % 4);
    for (int64_t b0 = grp; b0 < blocks; b0 += 4 * kDepth) {
      uint2 a[kMats][kDepth], bq[kMats][kDepth], hh[kMats][kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u, gb = row * blocks + b;
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          if (b < blocks) {
            a[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + gb * 128 + 64 * n + l0));
            bq[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + gb * 128 + 64 * n + 32 + l0));
            hh[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + n_blocks * 128 + gb * 64 + 32 * n + l0));
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u, gb = row * blocks + b;
        if (b >= blocks) break;
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          const float d = half_at(w[m] + n_blocks * 208 + gb * 2);
          const int8_t* sc = reinterpret_cast<const int8_t*>(w[m] + n_blocks * 192) + gb * 16 + 8 * n + l0 / 16;
          const float s[4] = {d * sc[0], d * sc[2], d * sc[4], d * sc[6]};
          // Four 6-bit weights per word, biased by 32 (per-byte subtract).
          int q[4][2];
          const int av[2] = {static_cast<int>(a[m][u].x), static_cast<int>(a[m][u].y)};
          const int bv[2] = {static_cast<int>(bq[m][u].x), static_cast<int>(bq[m][u].y)};
          const int hv[2] = {static_cast<int>(hh[m][u].x), static_cast<int>(hh[m][u].y)};
#pragma unroll
          for (int k = 0; k < 2; ++k) {
            q[0][k] = __vsub4((av[k] & kLo) | ((hv[k] << 4) & kHi), 0x20202020);
            q[1][k] = __vsub4((bv[k] & kLo) | ((hv[k] << 2) & kHi), 0x20202020);
            q[2][k] = __vsub4(((av[k] >> 4) & kLo) | (hv[k] & kHi), 0x20202020);
            q[3][k] = __vsub4(((bv[k] >> 4) & kLo) | ((hv[k] >> 2) & kHi), 0x20202020);
          }
#pragma unroll
          for (int t = 0; t < nt; ++t) {
            float v = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int2 xv = act8(x, cols, t, b * 256 + 128 * n + 32 * j + l0);
              const int si = __dp4a(q[j][1], xv.y, __dp4a(q[j][0], xv.x, 0));
              v += s[j] * act_ds(x, cols, t, b * 8 + 4 * n + j).x * si;
            }
            acc[m][t] += v;
          }
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The kernel shell: a warp's row, then the epilogue.
// ---------------------------------------------------------------------------------------------
// Up to three matrices of one format and width in one launch (Q, K and V): CTA c works on the
// first segment whose cta_end exceeds c.
struct Segments {
  const uint8_t* w[kMaxGemvSegments];
  float* y[kMaxGemvSegments];
  int64_t rows[kMaxGemvSegments];
  unsigned cta_end[kMaxGemvSegments];
  int n;
};

// Activations staged in shared memory by the whole CTA when they fit (every warp of the CTA reads
// the same vector; from L1/L2 the activation loads stalled the warps, ncu: L1TEX scoreboard).
constexpr int64_t kMaxStagedBytes = 48 * 1024;
__host__ __device__ constexpr int64_t staged_bytes(int64_t cols, int nt) { return nt * (cols + cols / 32 * 8); }

template <class F, int nt, GemvOut kOut>
__global__ void __launch_bounds__(kThreads) gemv_q8_kernel(Segments seg, const uint8_t* w2, int64_t cols, ActQ8 x,
                                                           int act, GemvRoute route) {
  constexpr int kMats = kOut == GemvOut::kGateUp ? 2 : 1;
  // The segment by selects over constant indices: a dynamic index into the parameter struct made
  // every thread copy it to local memory first (88-160-byte stack frames in ptxas -v, a local
  // round trip ahead of each warp's first weight load).
  const int s = (seg.n > 1 && blockIdx.x >= seg.cta_end[0]) + (seg.n > 2 && blockIdx.x >= seg.cta_end[1]);
  static_assert(kMaxGemvSegments == 3, "the selects cover three segments");
  auto at = [s](const auto& field) { return s == 0 ? field[0] : s == 1 ? field[1] : field[2]; };
  const unsigned cta0 = s == 0 ? 0u : s == 1 ? seg.cta_end[0] : seg.cta_end[1];
  const uint8_t* w[kMats];
  w[0] = at(seg.w);
  if constexpr (kMats == 2) w[1] = w2;
  float* y = at(seg.y);
  const int64_t rows = at(seg.rows);
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x - cta0) * kWarpsPerCta + threadIdx.x / 32;
  const int64_t blocks = cols / F::kBlockElems, n_blocks = rows * blocks;
  // Everything before pdl_begin() reads only weights: the row is prefetched into L2 while the
  // previous kernel finishes. A routed launch learns its expert from the previous kernel's output,
  // so it cannot start early.
  if (row < rows && !route.ids)
#pragma unroll
    for (int m = 0; m < kMats; ++m) F::prefetch(w[m], n_blocks, row, blocks, lane);
  pdl_begin();
  if (route.ids) {  // pair blockIdx.y: its expert's matrices, its input row, its output row
    const int64_t expert = route.ids[blockIdx.y], xr = blockIdx.y / route.x_div;
#pragma unroll
    for (int m = 0; m < kMats; ++m) w[m] += expert * route.expert_bytes;
    y += int64_t{blockIdx.y} * rows;
    x.q += xr * cols;
    x.ds += xr * (cols / 32);
  }
  extern __shared__ int4 staged[];
  if (staged_bytes(cols, nt) <= kMaxStagedBytes) {
    const int64_t q16 = nt * cols / 16;  // int4 units of the int8 part (cols % 32 == 0)
    const int4* src_q = reinterpret_cast<const int4*>(x.q);
    for (int64_t i = threadIdx.x; i < q16; i += kThreads) staged[i] = __ldg(src_q + i);
    float2* dst_ds = reinterpret_cast<float2*>(staged + q16);
    for (int64_t i = threadIdx.x; i < nt * (cols / 32); i += kThreads) dst_ds[i] = __ldg(x.ds + i);
    __syncthreads();
    x = ActQ8{reinterpret_cast<const int8_t*>(staged), reinterpret_cast<const float2*>(staged + q16)};
  }
  if (row >= rows) return;
  float acc[kMats][nt] = {};
  F::template row_dot<nt, kMats>(w, n_blocks, row, blocks, x, cols, lane, acc);
  if constexpr (kOut == GemvOut::kGateUp) {
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      const float g = warp_sum(acc[0][t]), u = warp_sum(acc[1][t]);
      if (lane == 0) y[t * rows + row] = gate_activation(g, act) * u;
    }
  } else {
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      const float v = warp_sum(acc[0][t]);
      if (lane == 0) y[t * rows + row] = kOut == GemvOut::kAdd ? y[t * rows + row] + v : v;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The streamed kernel (sm_90, one token, Q4_K / Q5_K in file layout): persistent CTAs, two per
// SM, each walking an even share of the row groups (8 rows, a warp each) in K chunks of 16 blocks
// (8 per matrix for gate + up). Stage = the group's 8 row pieces of the chunk, one bulk copy each,
// into a ring of kStreamStages stages completed on mbarriers; a stage is refilled once every warp
// has used it (one __syncthreads per stage).
//
// Why: the warp-per-row kernel above issues a row's 2.3 KB (K = 4096) and then waits: its bytes in
// flight are capped by registers (60 per lane at 4 CTAs/SM), each CTA pays its activation staging
// before its first weight load, and 1.5-3 waves of short-lived CTAs leave tails (ncu: QKV 14.2 MB
// in 13.2 us = 1.1 TB/s, gate-up 56.6 MB in 34 us = 1.7 TB/s). Here 2 CTAs x 3 stages x 18 KB =
// 108 KB are in flight per SM (kernels-hopper.md §1.2 asks for >= 32 KB), the first stages are
// issued before the PDL wait (weights depend on nothing, so they overlap the previous kernel), and
// the work is split evenly (O: 512 groups on 264 CTAs). Measured (H200, f55bde0): gate-up 26.8 us
// (2.1 TB/s), QKV 11.4 us, Qwen3-8B Q4_K_M tg128 278.8 -> 326.8 tok/s (docs/performance.md).
//
// Results differ from the warp-per-row kernel by float summation order only (a lane sums 64
// weights, not 32): bw24-kernel-check gemv_q8_streamed compares the two (normalized error < 1e-6).
// ---------------------------------------------------------------------------------------------
constexpr int kStreamStages = 3;

struct StreamArgs {
  Segments seg;
  const uint8_t* w2;
  int64_t cols;
  ActQ8 x;
  int act;
  unsigned group_end[kMaxGemvSegments];  // row groups of segments 0..s (cumulative)
  unsigned groups;
};

template <class F, int kMats>
struct StreamShape {
  static constexpr int kChunk = 16 / kMats;                                    // blocks per row piece
  static constexpr int kPiece = kChunk * F::kBlockBytes;                       // bytes per row piece
  static constexpr int kStage = kMats * kWarpsPerCta * kPiece;                 // bytes per stage
  static constexpr int kRing = 128 + kStreamStages * kStage;                   // barriers + stages
};
__host__ __device__ constexpr int64_t stream_act_bytes(int64_t cols) { return cols + cols / 32 * 8; }

// Lane (block slot, c) of a step takes the sub-block pair 2c, 2c + 1 of its block: the 32 quant bytes
// qs[32c, 32c + 32) (64 weights), so the scale / min decode and the float epilogue are paid once per
// 64 weights, not per 32 as in row_dot (ncu of the first streamed version, one lane per 32 weights:
// 4.2 instructions per weight against the budget of ~2, kernels-hopper.md §1.3, and the warps of a
// CTA per SM could not hide the latency of that chain).
struct StreamAct {
  int4 lo[2], hi[2];  // columns 64c + [0, 32) (sub-block 2c) and 64c + 32 + [0, 32) (2c + 1)
  float4 ds;          // (d, d sum q) of sub-blocks 2c and 2c + 1
};
__device__ __forceinline__ StreamAct stream_act(const ActQ8& x, int64_t b, int c) {
  const int4* q = reinterpret_cast<const int4*>(x.q + b * 256 + 64 * c);
  return {{q[0], q[1]}, {q[2], q[3]}, reinterpret_cast<const float4*>(x.ds)[b * 4 + c]};
}

// Scales and mins of sub-blocks 2c and 2c + 1 from the 12 scale bytes in registers s0..s2 (bytes
// 0-3, 4-7, 8-11), two bytes at a time, without a lane-dependent byte index (scale_min_k4's rule:
// j < 4: sc = s[j] & 63, m = s[j + 4] & 63; j >= 4: sc = low 4 bits of s[j + 4] | top 2 of s[j - 4],
// m = high 4 bits of s[j + 4] | top 2 of s[j]).
__device__ __forceinline__ void k4_pair(uint32_t s0, uint32_t s1, uint32_t s2, int c, int* sc, int* mn) {
  const int sh = 16 * (c & 1);
  const uint32_t p0 = (s0 >> sh) & 0xFFFFu, p1 = (s1 >> sh) & 0xFFFFu, p2 = (s2 >> sh) & 0xFFFFu;
  uint32_t vs, vm;
  if (c < 2) {
    vs = p0 & 0x3F3Fu;
    vm = p1 & 0x3F3Fu;
  } else {
    vs = (p2 & 0x0F0Fu) | ((p0 >> 2) & 0x3030u);
    vm = ((p2 >> 4) & 0x0F0Fu) | ((p1 >> 2) & 0x3030u);
  }
  sc[0] = static_cast<int>(vs & 0xFFu);
  sc[1] = static_cast<int>(vs >> 8);
  mn[0] = static_cast<int>(vm & 0xFFu);
  mn[1] = static_cast<int>(vm >> 8);
}

template <bool kFifth>
struct KQuantStream {
  static constexpr int kBlockElems = 256, kBlockBytes = kFifth ? 176 : 144, kQs = kFifth ? 48 : 16;
  // blk: one block in shared memory. Returns this lane's part of the block's dot product.
  __device__ static float dot64(const uint8_t* blk, const StreamAct& a, int c) {
    constexpr int kLo = 0x0F0F0F0F, kBit = 0x01010101;
    const uint4 head = *reinterpret_cast<const uint4*>(blk);
    const uint4* qs = reinterpret_cast<const uint4*>(blk + kQs + 32 * c);
    const uint4 q0 = qs[0], q1 = qs[1];
    const int q[8] = {int(q0.x), int(q0.y), int(q0.z), int(q0.w), int(q1.x), int(q1.y), int(q1.z), int(q1.w)};
    int lo[8], hi[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      lo[k] = q[k] & kLo;
      hi[k] = (q[k] >> 4) & kLo;
    }
    if constexpr (kFifth) {  // bit s of qh[l]: the fifth bit of element 32 s + l
      const uint4* qhp = reinterpret_cast<const uint4*>(blk + 16);
      const uint4 h0 = qhp[0], h1 = qhp[1];
      const int qh[8] = {int(h0.x), int(h0.y), int(h0.z), int(h0.w), int(h1.x), int(h1.y), int(h1.z), int(h1.w)};
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        lo[k] |= ((qh[k] >> (2 * c)) & kBit) << 4;
        hi[k] |= ((qh[k] >> (2 * c + 1)) & kBit) << 4;
      }
    }
    const int s1 = dp4a4(lo[4], lo[5], lo[6], lo[7], a.lo[1], dp4a4(lo[0], lo[1], lo[2], lo[3], a.lo[0], 0));
    const int s2 = dp4a4(hi[4], hi[5], hi[6], hi[7], a.hi[1], dp4a4(hi[0], hi[1], hi[2], hi[3], a.hi[0], 0));
    int sc[2], mn[2];
    k4_pair(head.y, head.z, head.w, c, sc, mn);
    const float d = half_lo(head.x), dmin = half_hi(head.x);
    return d * (static_cast<float>(sc[0]) * a.ds.x * static_cast<float>(s1) +
                static_cast<float>(sc[1]) * a.ds.z * static_cast<float>(s2)) -
           dmin * (static_cast<float>(mn[0]) * a.ds.y + static_cast<float>(mn[1]) * a.ds.w);
  }
};

template <class F, GemvOut kOut>
__global__ void __launch_bounds__(kThreads, 2) gemv_stream_kernel(StreamArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kMats = kOut == GemvOut::kGateUp ? 2 : 1;
  using Shape = StreamShape<F, kMats>;
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint8_t* ring = smem + 128;
  const int64_t blocks = a.cols / F::kBlockElems;
  const int chunks = static_cast<int>((blocks + Shape::kChunk - 1) / Shape::kChunk);
  const unsigned g0 = static_cast<unsigned>(uint64_t{blockIdx.x} * a.groups / gridDim.x);
  const unsigned g1 = static_cast<unsigned>(uint64_t{blockIdx.x + 1} * a.groups / gridDim.x);
  const int items = static_cast<int>(g1 - g0) * chunks;
  // Item i: row group g0 + i / chunks (segment s, rows [r0, r0 + nr)), K chunk i % chunks.
  struct Item {
    int s, nr, kc, nb;
    int64_t r0;
  };
  auto item = [&](int i) {
    Item it;
    const unsigned g = g0 + static_cast<unsigned>(i / chunks);
    it.s = (a.seg.n > 1 && g >= a.group_end[0]) + (a.seg.n > 2 && g >= a.group_end[1]);
    const unsigned first = it.s == 0 ? 0u : it.s == 1 ? a.group_end[0] : a.group_end[1];
    const int64_t rows = it.s == 0 ? a.seg.rows[0] : it.s == 1 ? a.seg.rows[1] : a.seg.rows[2];
    it.r0 = int64_t{g - first} * kWarpsPerCta;
    it.nr = static_cast<int>(min(int64_t{kWarpsPerCta}, rows - it.r0));
    it.kc = i % chunks;
    it.nb = static_cast<int>(min(int64_t{Shape::kChunk}, blocks - int64_t{it.kc} * Shape::kChunk));
    return it;
  };
  auto issue = [&](int i, uint64_t policy) {  // thread 0: item i's row pieces into its stage
    const Item it = item(i);
    const int slot = i % kStreamStages;
    const uint32_t piece = static_cast<uint32_t>(it.nb * F::kBlockBytes);
    mbar_arrive_expect_tx(&full[slot], static_cast<uint32_t>(kMats * it.nr) * piece);
    const uint8_t* w0 = it.s == 0 ? a.seg.w[0] : it.s == 1 ? a.seg.w[1] : a.seg.w[2];
    for (int m = 0; m < kMats; ++m) {
      const uint8_t* w = m == 0 ? w0 : a.w2;
      for (int r = 0; r < it.nr; ++r)
        bulk_copy_g2s(ring + slot * Shape::kStage + (m * kWarpsPerCta + r) * Shape::kPiece,
                      w + ((it.r0 + r) * blocks + int64_t{it.kc} * Shape::kChunk) * F::kBlockBytes, piece, &full[slot],
                      policy);
    }
  };
  uint64_t policy = 0;
  if (threadIdx.x == 0) {
    policy = l2_evict_first_policy();
    for (int s = 0; s < kStreamStages; ++s) mbar_init(&full[s], 1);
    mbar_init_fence();
    for (int i = 0; i < min(items, kStreamStages); ++i) issue(i, policy);
  }
  pdl_begin();
  // The activations into shared memory behind the ring (every warp reads all of them).
  int4* act = reinterpret_cast<int4*>(ring + kStreamStages * Shape::kStage);
  const int64_t q16 = a.cols / 16;
  for (int64_t i = threadIdx.x; i < q16; i += kThreads) act[i] = __ldg(reinterpret_cast<const int4*>(a.x.q) + i);
  float2* act_ds = reinterpret_cast<float2*>(act + q16);
  for (int64_t i = threadIdx.x; i < a.cols / 32; i += kThreads) act_ds[i] = __ldg(a.x.ds + i);
  __syncthreads();
  const ActQ8 x{reinterpret_cast<const int8_t*>(act), act_ds};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int slot_b = lane / 4, c = lane % 4;  // block slot of the step, sub-block pair 2c, 2c + 1
  float acc[kMats] = {};
  for (int i = 0; i < items; ++i) {
    const Item it = item(i);
    const int slot = i % kStreamStages;
    mbar_wait(&full[slot], static_cast<uint32_t>(i / kStreamStages) & 1u);
    if (warp < it.nr) {
      const uint8_t* stage = ring + slot * Shape::kStage + warp * Shape::kPiece;
#pragma unroll
      for (int u = 0; u < (Shape::kChunk + 7) / 8; ++u) {
        const int bb = slot_b + 8 * u;
        if (bb < it.nb) {
          const int64_t b = int64_t{it.kc} * Shape::kChunk + bb;
          const StreamAct xa = stream_act(x, b, c);
#pragma unroll
          for (int m = 0; m < kMats; ++m)
            acc[m] += F::dot64(stage + m * kWarpsPerCta * Shape::kPiece + bb * F::kBlockBytes, xa, c);
        }
      }
      if (it.kc == chunks - 1) {  // the row is complete: the epilogue of the warp-per-row kernel
        float* y = it.s == 0 ? a.seg.y[0] : it.s == 1 ? a.seg.y[1] : a.seg.y[2];
        const int64_t row = it.r0 + warp;
        if constexpr (kOut == GemvOut::kGateUp) {
          const float g = warp_sum(acc[0]), u = warp_sum(acc[1]);
          if (lane == 0) y[row] = gate_activation(g, a.act) * u;
        } else {
          const float v = warp_sum(acc[0]);
          if (lane == 0) y[row] = kOut == GemvOut::kAdd ? y[row] + v : v;
        }
#pragma unroll
        for (int m = 0; m < kMats; ++m) acc[m] = 0.0f;
      }
    }
    __syncthreads();  // every warp is done with the stage: refill it
    if (threadIdx.x == 0 && i + kStreamStages < items) issue(i + kStreamStages, policy);
  }
#endif
}

// Whether the streamed kernel takes this launch; then launches it.
template <class F, GemvOut kOut>
cudaError_t launch_stream(const StreamArgs& a, size_t smem, cudaStream_t s) {
  static const cudaError_t attr =
      cudaFuncSetAttribute(gemv_stream_kernel<F, kOut>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  if (attr != cudaSuccess) return attr;
  // Two CTAs per SM (16 warps): with one, the warps could not hide their own load-to-use chains
  // (H200, Qwen3-8B Q4_K_M tg128: 237.9 tok/s with one, 325.8 with two, f55bde0).
  constexpr int kCtasPerSm = 2;
  const unsigned grid = std::min<unsigned>(a.groups, static_cast<unsigned>(kCtasPerSm * sm_count()));
  return launch_pdl(gemv_stream_kernel<F, kOut>, dim3(grid), dim3(kThreads), smem, s, a);
}

struct Launch {
  Segments seg;
  const uint8_t* w2;
  int64_t cols;
  ActQ8 x;
  int act;
  GemvRoute route;
  cudaStream_t s;
};

template <class F, GemvOut kOut, int nt>
cudaError_t launch(const Launch& a) {
  const int64_t smem = staged_bytes(a.cols, nt);
  const dim3 grid(a.seg.cta_end[a.seg.n - 1], a.route.ids ? static_cast<unsigned>(a.route.pairs) : 1u);
  return launch_pdl(gemv_q8_kernel<F, nt, kOut>, grid, dim3(kThreads),
                    static_cast<size_t>(smem <= kMaxStagedBytes ? smem : 0), a.s, a.seg, a.w2, a.cols, a.x, a.act,
                    a.route);
}

// The token count is a template parameter: with a runtime count the accumulators went to local
// memory (docs/performance.md, 912839ec).
template <class F, GemvOut kOut>
cudaError_t launch_nt(const Launch& a, int nt) {
  switch (nt) {
    case 1: return launch<F, kOut, 1>(a);
    case 2: return launch<F, kOut, 2>(a);
    case 3: return launch<F, kOut, 3>(a);
    case 4: return launch<F, kOut, 4>(a);
    case 5: return launch<F, kOut, 5>(a);
    case 6: return launch<F, kOut, 6>(a);
    case 7: return launch<F, kOut, 7>(a);
    default: return launch<F, kOut, 8>(a);
  }
}

template <class F>
cudaError_t launch_format(const Launch& a, int nt, GemvOut out) {
  if (a.cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  switch (out) {
    case GemvOut::kStore: return launch_nt<F, GemvOut::kStore>(a, nt);
    case GemvOut::kAdd: return launch_nt<F, GemvOut::kAdd>(a, nt);
    case GemvOut::kGateUp: return launch_nt<F, GemvOut::kGateUp>(a, nt);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

namespace {
std::atomic<int> g_streamed{-1};  // -1: not yet read from BW24_GEMV_STREAM
}
bool gemv_q8_streamed() {
  int v = g_streamed.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("BW24_GEMV_STREAM");
    v = (e && e[0] == '0') ? 0 : 1;
    g_streamed.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
void gemv_q8_set_streamed(bool on) { g_streamed.store(on ? 1 : 0, std::memory_order_relaxed); }

bool gemv_q8_supports(uint32_t t) {
  return t == kQ4_0 || t == kQ4_1 || t == kQ5_0 || t == kQ5_1 || t == kQ8_0 || t == kQ4_K || t == kQ5_K || t == kQ6_K ||
         t == kIQ4_XS;
}

namespace {
// The dispatch table of the int8 family: one entry per format.
cudaError_t gemv_q8_launch(const GemvSegment* segs, int n_segs, const void* w2, uint32_t type, int64_t cols, ActQ8 x,
                           int nt, GemvOut out, int act, const GemvRoute& route, cudaStream_t s) {
  if (nt < 1 || nt > kGemvMaxTokens || cols <= 0 || n_segs < 1 || n_segs > kMaxGemvSegments ||
      (out == GemvOut::kGateUp && (!w2 || n_segs != 1)))
    return cudaErrorInvalidValue;
  if (route.ids && (nt != 1 || n_segs != 1 || route.pairs < 1 || route.pairs > 65535 || route.x_div < 1))
    return cudaErrorInvalidValue;
  Launch a{{}, static_cast<const uint8_t*>(w2), cols, x, act, route, s};
  unsigned ctas = 0;
  for (int i = 0; i < n_segs; ++i) {
    if (segs[i].rows <= 0) return cudaErrorInvalidValue;
    a.seg.w[i] = static_cast<const uint8_t*>(segs[i].w);
    a.seg.y[i] = segs[i].y;
    a.seg.rows[i] = segs[i].rows;
    ctas += static_cast<unsigned>((segs[i].rows + kWarpsPerCta - 1) / kWarpsPerCta);
    a.seg.cta_end[i] = ctas;
  }
  a.seg.n = n_segs;
  if (nt == 1 && !route.ids && (type == kQ4_K || type == kQ5_K) && gemv_q8_streamed() && pdl_supported()) {
    StreamArgs sa{a.seg, a.w2, cols, x, act, {}, 0};
    bool aligned = out != GemvOut::kGateUp || reinterpret_cast<uintptr_t>(a.w2) % 16 == 0;
    for (int i = 0; i < n_segs; ++i) {
      sa.groups += static_cast<unsigned>((segs[i].rows + kWarpsPerCta - 1) / kWarpsPerCta);
      sa.group_end[i] = sa.groups;
      aligned = aligned && reinterpret_cast<uintptr_t>(segs[i].w) % 16 == 0;
    }
    const int kMats = out == GemvOut::kGateUp ? 2 : 1;
    using S4 = KQuantStream<false>;
    using S5 = KQuantStream<true>;
    const int64_t ring = type == kQ4_K ? (kMats == 1 ? StreamShape<S4, 1>::kRing : StreamShape<S4, 2>::kRing)
                                       : (kMats == 1 ? StreamShape<S5, 1>::kRing : StreamShape<S5, 2>::kRing);
    const int64_t smem = ring + stream_act_bytes(cols);
    if (aligned && cols % 256 == 0 && smem <= 200 * 1024) {
      const auto sz = static_cast<size_t>(smem);
      switch (out) {
        case GemvOut::kStore:
          return type == kQ4_K ? launch_stream<S4, GemvOut::kStore>(sa, sz, s) : launch_stream<S5, GemvOut::kStore>(sa, sz, s);
        case GemvOut::kAdd:
          return type == kQ4_K ? launch_stream<S4, GemvOut::kAdd>(sa, sz, s) : launch_stream<S5, GemvOut::kAdd>(sa, sz, s);
        case GemvOut::kGateUp:
          return type == kQ4_K ? launch_stream<S4, GemvOut::kGateUp>(sa, sz, s)
                               : launch_stream<S5, GemvOut::kGateUp>(sa, sz, s);
      }
    }
  }
  switch (type) {
    case kQ4_0: return launch_format<Legacy<Q4_0>>(a, nt, out);
    case kQ4_1: return launch_format<Legacy<Q4_1>>(a, nt, out);
    case kQ5_0: return launch_format<Legacy<Q5_0>>(a, nt, out);
    case kQ5_1: return launch_format<Legacy<Q5_1>>(a, nt, out);
    case kQ8_0: return launch_format<Legacy<Q8_0>>(a, nt, out);
    case kQ4_K: return launch_format<Q4_K>(a, nt, out);
    case kQ5_K: return launch_format<Q5_K>(a, nt, out);
    case kQ6_K: return launch_format<Q6_K>(a, nt, out);
    case kIQ4_XS: return launch_format<IQ4_XS>(a, nt, out);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t gemv_q8_multi(const GemvSegment* segs, int n_segs, const void* w2, uint32_t type, int64_t cols, ActQ8 x,
                          int nt, GemvOut out, int act, cudaStream_t s) {
  return gemv_q8_launch(segs, n_segs, w2, type, cols, x, nt, out, act, GemvRoute{}, s);
}

cudaError_t gemv_q8(const void* w, const void* w2, uint32_t type, int64_t rows, int64_t cols, ActQ8 x, int nt,
                    float* y, GemvOut out, int act, cudaStream_t s, const GemvRoute* route) {
  const GemvSegment seg{w, y, rows};
  return gemv_q8_launch(&seg, 1, w2, type, cols, x, nt, out, act, route ? *route : GemvRoute{}, s);
}

}  // namespace bw24::cuda
