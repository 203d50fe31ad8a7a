// The int8-activation formats of the warp-per-row GEMV kernels and what both their shells share: each format's
// block loads and its dot (row_dot: a warp's row or rows), the activations' staging in shared memory, and the
// routed launches' rows a warp. Included by gemv_q8.cu (the register kernel: every format and token count) and
// gemv_q8_routed.cu (the MoE routed gate-up and the down + combine) only: its anonymous namespace gives each of the
// two its own internal copy, so the kernels' names stay internal to each file. Internal to cuda/gemv.
#pragma once

#include <cuda_fp16.h>

#include <type_traits>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/gemv/q8_common.cuh"

namespace bw24::cuda {
using namespace gemv_detail;
namespace {

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

// A Q5_0 / Q5_1 block's 32 five-bit quants (nibbles qs, fifth bits qh) times 32 int8 activations.
template <class Blk>
__device__ __forceinline__ int q5_dot(const Blk& b, const int4& xa, const int4& xb) {
  constexpr int kLo = 0x0F0F0F0F;
  const int q[4] = {static_cast<int>(b.qs.x), static_cast<int>(b.qs.y), static_cast<int>(b.qs.z),
                    static_cast<int>(b.qs.w)};
  int lo[4], hi[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    lo[k] = (q[k] & kLo) | fifth_bits(b.qh >> (4 * k));
    hi[k] = ((q[k] >> 4) & kLo) | fifth_bits(b.qh >> (16 + 4 * k));
  }
  return dp4a4(hi[0], hi[1], hi[2], hi[3], xb, dp4a4(lo[0], lo[1], lo[2], lo[3], xa, 0));
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
    const int s = q5_dot(b, xa, xb);
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
    const int s = q5_dot(b, xa, xb);
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

// The row offset of piece m of a warp's kMats pieces: gate and up of one row (kRows 1: 0), or
// kRows rows of one matrix (m). (Written as `kRows == 1 ? 0 : m` the same values gave other SASS
// for every instance, unmeasured; this form is the one the H200 rows ran.)
template <int kMats, int kRows>
__device__ constexpr int piece_row(int m) {
  return m / (kMats / kRows);
}

// One lane per block; kDepth blocks per lane loaded before any is used.
template <class F>
struct Legacy {
  static constexpr int kBlockElems = 32;
  __device__ static void prefetch(const uint8_t* w, int64_t, int64_t row, int64_t blocks, int lane) {
    prefetch_l2(w + row * blocks * F::kQuantBytes, blocks * F::kQuantBytes, lane);  // the quant plane
  }
  // kMats pieces over the same activations, the loads of all of them issued before any is used:
  // kRows consecutive rows, each of kMats / kRows matrices of the same shape (gate and up), piece
  // m reading row + piece_row(m) of w[m]. The other formats' row_dot take the same pieces.
  template <int nt, int kMats, int kRows>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t n_blocks, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr int kDepth = kMats > 2 ? 1 : 2;  // four pieces: one block each in flight, same order
    for (int64_t b0 = lane; b0 < blocks; b0 += 32 * kDepth) {
      typename F::Blk blk[kMats][kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u)
#pragma unroll
        for (int m = 0; m < kMats; ++m)
          if (b0 + 32 * u < blocks)
            blk[m][u] = F::load(w[m], n_blocks, (row + piece_row<kMats, kRows>(m)) * blocks + b0 + 32 * u);
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
  // Lane (c, h)'s part of one block: head = the block's first 16 bytes (d, dmin | 12 scale bytes),
  // qq = its 16 quant bytes, hh = its 16 fifth-bit bytes (Q5_K). One token: the scales of sub-blocks
  // 2c and 2c + 1 come from head's registers two bytes at a time (scale_min_k4_pair, as the streamed
  // GEMV). Read as a byte array with the lane's index (scale_min_k4), the head lives in local
  // memory, 64 bytes a thread: a store and byte loads after each weight load (ncu, the routed
  // gate-up of Qwen3-30B-A3B: 12.3 us for 14.2 MB, 8.6 of 16.7 cycles between issues waiting on
  // L1TEX). Several tokens and Q5_K keep that form: from registers those instances grew by up to
  // 36 registers (Q4_K nt = 2: 69 -> 96, Q5_K nt = 1: 77 -> 96, a resident CTA less; Q5_K's
  // combine spilled 44 bytes), unmeasured trades the Q4_K one-token case does not make (60 -> 64).
  template <int nt>
  __device__ static void dot(const uint4& head, const uint4& qq, const uint4& hh, const Act<nt>& a, int c, int h,
                             float (&acc)[nt]) {
    constexpr int kLo = 0x0F0F0F0F, kBit = 0x01010101;
    float d, dmin;
    int sc1, m1, sc2, m2;
    if constexpr (nt == 1 && !kFifth) {
      d = half_lo(head.x);
      dmin = half_hi(head.x);
      int sc[2], mn[2];
      scale_min_k4_pair(c, head.y, head.z, head.w, sc, mn);
      sc1 = sc[0], sc2 = sc[1], m1 = mn[0], m2 = mn[1];
    } else {
      const uint8_t* hb = reinterpret_cast<const uint8_t*>(&head);
      d = half_at(hb);
      dmin = half_at(hb + 2);
      scale_min_k4(2 * c, hb + 4, &sc1, &m1);
      scale_min_k4(2 * c + 1, hb + 4, &sc2, &m2);
    }
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
  template <int nt, int kMats, int kRows>
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
            const uint8_t* blk = w[m] + ((row + piece_row<kMats, kRows>(m)) * blocks + b) * kBlockBytes;
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
        for (int m = 0; m < kMats; ++m) dot<nt>(head[m][u], qv[m][u], hv[kFifth ? m : 0][kFifth ? u : 0], a, c, h, acc[m]);
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
  template <int nt, int kMats, int kRows>
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
            const int64_t gbm = gb + piece_row<kMats, kRows>(m) * blocks;
            qv[m][u] = __ldg(reinterpret_cast<const uint4*>(w[m] + gbm * 128 + 16 * ib));
            head[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + n_blocks * 128 + gbm * 8));
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
    const Q6KTiles t(n_blocks, blocks);
    if (t.sh != kQ6KWhole) {  // the row is whole tiles: one run of bytes
      prefetch_l2(w + t.base(row * blocks), blocks * 210, lane);
      return;
    }
    prefetch_l2(w + row * blocks * 128, blocks * 128, lane);                 // ql
    prefetch_l2(w + n_blocks * 128 + row * blocks * 64, blocks * 64, lane);  // qh
  }
  template <int nt, int kMats, int kRows>
  __device__ static void row_dot(const uint8_t* const (&w)[kMats], int64_t n_blocks, int64_t row, int64_t blocks,
                                 const ActQ8& x, int64_t cols, int lane, float (&acc)[kMats][nt]) {
    constexpr int kDepth = 4 / kMats;
    const int sub = lane % 8, grp = lane / 8, n = sub / 4, l0 = 8 * (sub % 4);
    const Q6KTiles t6(n_blocks, blocks);  // where each field is (cuda/common/q6k_tiles.cuh)
    for (int64_t b0 = grp; b0 < blocks; b0 += 4 * kDepth) {
      uint2 a[kMats][kDepth], bq[kMats][kDepth], hh[kMats][kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u, gb = row * blocks + b;
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          if (b < blocks) {
            const int64_t gbm = gb + piece_row<kMats, kRows>(m) * blocks;
            const uint8_t* ql = w[m] + t6.ql(gbm) + 64 * n + l0;
            a[m][u] = __ldg(reinterpret_cast<const uint2*>(ql));
            bq[m][u] = __ldg(reinterpret_cast<const uint2*>(ql + 32));
            hh[m][u] = __ldg(reinterpret_cast<const uint2*>(w[m] + t6.qh(gbm) + 32 * n + l0));
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t b = b0 + 4 * u, gb = row * blocks + b;
        if (b >= blocks) break;
#pragma unroll
        for (int m = 0; m < kMats; ++m)
          block_dot<nt>(a[m][u], bq[m][u], hh[m][u], w[m], t6, gb + piece_row<kMats, kRows>(m) * blocks, b, n, l0, x,
                        cols, acc[m]);
      }
    }
  }
  // The lane's part of block b (gbm: its index in the tensor at w, whose fields t6 places) for every
  // token, its ql / qh pieces (a, bq, hh) already loaded: the scales and d from w, the activations from x.
  // row_dot and the combine's shared-memory image (dot_rows_image) both take it.
  // (Block is the caller's index type: the image's int keeps that kernel's index arithmetic 32-bit.)
  template <int nt, typename Block>
  __device__ static void block_dot(uint2 a, uint2 bq, uint2 hh, const uint8_t* w, const Q6KTiles& t6, int64_t gbm,
                                   Block b, int n, int l0, const ActQ8& x, int64_t cols, float (&acc)[nt]) {
    const float d = half_at(w + t6.d(gbm));
    const int8_t* sc = reinterpret_cast<const int8_t*>(w + t6.sc(gbm)) + 8 * n + l0 / 16;
    const float s[4] = {d * sc[0], d * sc[2], d * sc[4], d * sc[6]};
    int q[4][2];
    q6k_unpack<false>(a, bq, hh, q);
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      int2 xv[4];
      float dx[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        xv[j] = act8(x, cols, t, b * 256 + 128 * n + 32 * j + l0);
        dx[j] = act_ds(x, cols, t, b * 8 + 4 * n + j).x;
      }
      acc[t] += q6k_lane_dot<false>(q, s, xv, dx);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The activations in shared memory: both kernel shells (the register kernel, the combine).
// ---------------------------------------------------------------------------------------------
// Activations staged in shared memory by the whole CTA when they fit (every warp of the CTA reads
// the same vector; from L1/L2 the activation loads stalled the warps, ncu: L1TEX scoreboard).
constexpr int64_t kMaxStagedBytes = 48 * 1024;
__host__ __device__ constexpr int64_t staged_bytes(int64_t cols, int nt) { return nt * (cols + cols / 32 * 8); }
// A launch's dynamic shared memory for `bytes` of staged activations: none where they do not fit
// (stage_act then leaves them in global memory).
constexpr size_t staged_smem(int64_t bytes) { return static_cast<size_t>(bytes <= kMaxStagedBytes ? bytes : 0); }

// The nt activation rows of x (int8 and their (d, d sum q) pairs) into the CTA's dynamic shared
// memory where they fit (kMaxStagedBytes; the launch sized it), and x pointed there: every warp
// reads all of them. Both kernel shells below call it. The plain loop (stage_q8_rows one ahead):
// six ahead took the one-token routed gate-up from 64 to 78 registers (4 -> 3 CTAs an SM), and two
// in the combine (its 8 x 768 rows take 1.5 passes) measured no different from one (next122 /
// next123); the multi-token rows, up to 8 x 4096, are unmeasured either way.
template <int kCtaThreads = kThreads>
__device__ __forceinline__ void stage_act(ActQ8& x, int64_t cols, int nt) {
  extern __shared__ int4 staged[];
  if (staged_bytes(cols, nt) <= kMaxStagedBytes) {
    const int64_t q16 = nt * cols / 16;  // int4 units of the int8 part (cols % 32 == 0)
    stage_q8_rows<kCtaThreads, 1>(staged, reinterpret_cast<float2*>(staged + q16), x.q, x.ds, q16,
                               [](int64_t i) { return i; });
    __syncthreads();
    x = ActQ8{reinterpret_cast<const int8_t*>(staged), reinterpret_cast<const float2*>(staged + q16)};
  }
}

// The same staging by cp.async, as one commit group of the calling thread (the caller waits for it and
// syncs the CTA; the rows fit: kMaxStagedBytes), and the view of it: stage_act's layout, so the dots
// read the same bytes. The combine's cp.async form issues it between its expert id and its weight copies.
template <int kCtaThreads>
__device__ __forceinline__ ActQ8 stage_act_async(const ActQ8& x, int64_t cols, int nt) {
  extern __shared__ int4 staged[];
  const int64_t q16 = nt * cols / 16, n_pairs = nt * cols / 32;  // int4 units of the int8 part, (d, d sum q) pairs
  const int4* src_q = reinterpret_cast<const int4*>(x.q);
  float2* dst_ds = reinterpret_cast<float2*>(staged + q16);
  for (int64_t i = threadIdx.x; i < q16; i += kCtaThreads) cp_async16(staged + i, src_q + i, 16);
  for (int64_t i = threadIdx.x; i < n_pairs; i += kCtaThreads) cp_async8(dst_ds + i, x.ds + i);
  cp_async_commit();
  return ActQ8{reinterpret_cast<const int8_t*>(staged), dst_ds};
}

// Rows a warp takes in a routed one-token store launch (a MoE expert's down projection) whose row
// count allows: Qwen3-30B-A3B's down rows are 768 columns, three Q4_K / Q6_K blocks; a row a warp
// kept 432 bytes in flight per warp, ~14 KB a SM at the 4 CTAs its registers allow, and ran at
// 0.69 TB/s (ncu, 2048 CTAs in 3.9 waves). Four rows a warp keep 1.7 KB in flight in a quarter of
// the CTAs: 13.3 -> 8.3 us. (Gate-up rows are 2048 columns, 2.3 KB a warp in flight already; two
// rows a warp there measured 12.2 -> 12.4 us, docs/performance.md round 6.) Else a row a warp.
constexpr int kRoutedStoreRows = 4;

// kMinCtas: the one-token Q4_K gate-up (the routed gate-up of the MoE shapes: 768 CTAs a Qwen3-30B-A3B
// layer) held to four CTAs an SM: 64 registers without spills. Unbounded it had grown to 70 since
// round 14 measured it at 64, so three an SM: the 30B's 768 CTAs ran in waves of 396 + 372 instead of
// 528 + 240. H200, tg128 `-p 16 -r 3`, two rounds (next217): Qwen3-30B-A3B 573.8 / 573.3 -> 582.3 /
// 582.0, Qwen3.6-35B-A3B 511.2 / 516.2 -> 529.2 / 530.4. (Q5_K and Q6_K gate-ups spill under the
// bound, 80 and 60 bytes: left unbounded.)
template <class F, int nt, GemvOut kOut>
constexpr int kMinCtas = std::is_same_v<F, Q4_K> && kOut == GemvOut::kGateUp && nt == 1 ? 4 : 1;

template <auto kKernel>
cudaError_t occupancy_of(size_t smem, GemvOccupancy* o, int threads = kThreads) {
  o->threads = threads;
  return kernel_occupancy<kKernel>(threads, smem, &o->regs, &o->ctas_per_sm);
}

}  // namespace
}  // namespace bw24::cuda
