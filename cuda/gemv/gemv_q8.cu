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
// Work split: one warp per output row, 8 per CTA (a routed one-token store launch, a MoE down
// projection: four rows a warp; rows_per_warp). Legacy formats: one lane per 32-weight
// block, a warp covers 1024 columns per step. K-quants: 8 lanes per 256-weight block, 4 blocks per step.
// Each lane issues the loads of kDepth steps before using any (bytes in flight,
// kernels-hopper.md §1.2). (Hoisting the first step's loads above the PDL wait measured faster
// for Q8_0 and slower for the K-quants; not kept, docs/performance.md.)
#include <cuda_fp16.h>

#include <atomic>
#include <type_traits>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/gemv/q8_common.cuh"
#include "cuda/moe/combine.cuh"

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
// The kernel shell: a warp's row, then the epilogue.
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

// kRows: rows a warp takes at once (rows_per_warp). A warp dots kMats pieces with all their loads
// in flight: gate and up of one row, or kRows consecutive rows of one matrix (rows a multiple of
// kRows). Each lane adds its blocks in the same order either way, so a
// row's sum does not depend on kRows (the kernel check compares routed launches with plain ones
// bit for bit).
// kMinCtas: the one-token Q4_K gate-up (the routed gate-up of the MoE shapes: 768 CTAs a Qwen3-30B-A3B
// layer) held to four CTAs an SM: 64 registers without spills. Unbounded it had grown to 70 since
// round 14 measured it at 64, so three an SM: the 30B's 768 CTAs ran in waves of 396 + 372 instead of
// 528 + 240. H200, tg128 `-p 16 -r 3`, two rounds (next217): Qwen3-30B-A3B 573.8 / 573.3 -> 582.3 /
// 582.0, Qwen3.6-35B-A3B 511.2 / 516.2 -> 529.2 / 530.4. (Q5_K and Q6_K gate-ups spill under the
// bound, 80 and 60 bytes: left unbounded.)
template <class F, int nt, GemvOut kOut>
constexpr int kMinCtas = std::is_same_v<F, Q4_K> && kOut == GemvOut::kGateUp && nt == 1 ? 4 : 1;
template <class F, int nt, GemvOut kOut, int kRows>
__global__ void __launch_bounds__(kThreads, kMinCtas<F, nt, kOut>)
    gemv_q8_kernel(Segments seg, const uint8_t* w2, int64_t cols, ActQ8 x, int act, GemvRoute route) {
  static_assert(kRows == 1 || kOut == GemvOut::kStore, "several rows a warp: store launches only");
  constexpr int kMats = kOut == GemvOut::kGateUp ? 2 : kRows;
  const int s = segment_of(seg.cta_end, seg.n, blockIdx.x);  // by selects (q8_common.cuh)
  const unsigned cta0 = segment_start(seg.cta_end, s);
  const uint8_t* w[kMats];
#pragma unroll
  for (int m = 0; m < kMats; ++m) w[m] = kOut == GemvOut::kGateUp && m == 1 ? w2 : segment_pick(seg.w, s);
  float* y = segment_pick(seg.y, s);
  const int64_t rows = segment_pick(seg.rows, s);
  const int lane = threadIdx.x % 32;
  const int64_t row = (static_cast<int64_t>(blockIdx.x - cta0) * kWarpsPerCta + threadIdx.x / 32) * kRows;
  const int64_t blocks = cols / F::kBlockElems, n_blocks = rows * blocks;
  // Everything before pdl_begin() reads only weights: the row is prefetched into L2 while the
  // previous kernel finishes. A routed launch learns its expert from the previous kernel's output,
  // so it cannot start early.
  if (row < rows && !route.ids)
#pragma unroll
    for (int m = 0; m < kMats; ++m) F::prefetch(w[m], n_blocks, row + piece_row<kMats, kRows>(m), blocks, lane);
  pdl_begin();
  if (route.ids) {  // pair blockIdx.y: its expert's matrices, its input row, its output row
    const int64_t expert = route.ids[blockIdx.y], xr = blockIdx.y / route.x_div;
#pragma unroll
    for (int m = 0; m < kMats; ++m) w[m] += expert * route.expert_bytes;
    y += int64_t{blockIdx.y} * rows;
    x.q += xr * cols;
    x.ds += xr * (cols / 32);
  }
  stage_act(x, cols, nt);
  if (row >= rows) return;
  float acc[kMats][nt] = {};
  F::template row_dot<nt, kMats, kRows>(w, n_blocks, row, blocks, x, cols, lane, acc);
  if constexpr (kOut == GemvOut::kGateUp) {
#pragma unroll
    for (int t = 0; t < nt; ++t) {
      const float g = warp_sum(acc[0][t]), u = warp_sum(acc[1][t]);
      if (lane == 0) y[t * rows + row] = gate_activation(g, act) * u;
    }
  } else {
    // An add launch's old outputs (every token's) read at once before the first store: read in the
    // store loop, each would wait for the stores before it (the compiler cannot tell they are other
    // addresses), nt - 1 dependent L2 round trips at the end of every warp of a multi-token pass.
    // (An add launch takes one row a warp, kRows = 1: the static_assert above.) H200, bw24-microbench
    // gemv_q8/Q4_K 4096 x 4096 add (next164, two rounds): 2 tokens 15.3 / 14.9 -> 13.7 / 12.6 us,
    // 8 tokens 29.3 / 29.0 -> 25.3 / 25.1 us.
    float old[nt] = {};
    if constexpr (kOut == GemvOut::kAdd) {
      if (lane == 0) {
#pragma unroll
        for (int t = 0; t < nt; ++t) old[t] = y[t * rows + row];
      }
    }
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const int64_t r = row + m;
#pragma unroll
      for (int t = 0; t < nt; ++t) {
        const float v = warp_sum(acc[m][t]);
        if (lane == 0) y[t * rows + r] = kOut == GemvOut::kAdd ? old[t] + v : v;
      }
    }
  }
}

struct Launch {
  Segments seg;
  const uint8_t* w2;
  int64_t cols;
  ActQ8 x;
  int act;
  GemvRoute route;
  cudaStream_t s;
  int rows_warp = 1;  // rows a warp takes (rows_per_warp), decided once per launch
};

template <class F, GemvOut kOut, int nt, int kRows = 1>
cudaError_t launch(const Launch& a) {
  const int64_t smem = staged_bytes(a.cols, nt);
  const dim3 grid(a.seg.cta_end[a.seg.n - 1], a.route.ids ? static_cast<unsigned>(a.route.pairs) : 1u);
  return launch_pdl(gemv_q8_kernel<F, nt, kOut, kRows>, grid, dim3(kThreads),
                    staged_smem(smem), a.s, a.seg, a.w2, a.cols, a.x, a.act,
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

// Rows a warp takes in a routed one-token store launch (a MoE expert's down projection) whose row
// count allows: Qwen3-30B-A3B's down rows are 768 columns, three Q4_K / Q6_K blocks; a row a warp
// kept 432 bytes in flight per warp, ~14 KB a SM at the 4 CTAs its registers allow, and ran at
// 0.69 TB/s (ncu, 2048 CTAs in 3.9 waves). Four rows a warp keep 1.7 KB in flight in a quarter of
// the CTAs: 13.3 -> 8.3 us. (Gate-up rows are 2048 columns, 2.3 KB a warp in flight already; two
// rows a warp there measured 12.2 -> 12.4 us, docs/performance.md round 6.) Else a row a warp.
constexpr int kRoutedStoreRows = 4;
int rows_per_warp(const Launch& a, int nt, GemvOut out) {
  const bool routed_store = a.route.ids && nt == 1 && a.seg.n == 1 && out == GemvOut::kStore;
  return routed_store && a.seg.rows[0] % kRoutedStoreRows == 0 ? kRoutedStoreRows : 1;
}

template <class F>
cudaError_t launch_format(const Launch& a, int nt, GemvOut out) {
  if (a.cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  if (a.rows_warp == kRoutedStoreRows) return launch<F, GemvOut::kStore, 1, kRoutedStoreRows>(a);
  switch (out) {
    case GemvOut::kStore: return launch_nt<F, GemvOut::kStore>(a, nt);
    case GemvOut::kAdd: return launch_nt<F, GemvOut::kAdd>(a, nt);
    case GemvOut::kGateUp: return launch_nt<F, GemvOut::kGateUp>(a, nt);
  }
  return cudaErrorInvalidValue;
}

// The combine's weights by cp.async (round 39): a warp copies its kRoutedStoreRows rows of its
// expert into shared memory right after it reads its expert id (since round 50 behind the CTA's
// cp.async staging of the activations: the kernel says why), and dots from there. Round 38's timing
// build showed the register form's weight loads starting 1.1 us after the PDL wait, behind the ids
// and the staging of 8 activation rows; the register forms that issued them earlier spilled (rounds
// 37, 38). cp.async holds no registers: 48 (Q4_K) and 54 (Q6_K) registers (round 50's order), no
// spills, 35 KB of shared memory a CTA, still four an SM.
// Q4_K (the rows' blocks are one run in the file) and Q6_K (a run of each plane, or one run of whole
// tiles); the image keeps the tensor's layout for an expert of 4 rows, so the fields sit where
// Q6KTiles says, and the dot is row_dot's, so the bits are the register kernel's.
// Rows of at most kAsyncMaxBlocks<F> blocks take it (0: the format never does; combine_async_takes
// gives the measurements); a row's image holds kAsyncBlocks.
constexpr int kAsyncBlocks = 4;
template <class F>
constexpr int kAsyncMaxBlocks = std::is_same_v<F, Q6_K> ? kAsyncBlocks : std::is_same_v<F, Q4_K> ? 2 : 0;
template <class F>
constexpr bool kCombineAsync = kAsyncMaxBlocks<F> > 0;
template <class F>
constexpr int kAsyncRowBytes = std::is_same_v<F, Q6_K> ? 210 * kAsyncBlocks : 144 * kAsyncBlocks;  // a row's image
// Where the warps' images start in the dynamic shared memory: after the staged activations
// (staged_bytes), rounded up for the 16-byte copies. The kernel and its launch's size both use it.
__host__ __device__ constexpr int64_t async_images_at(int64_t staged) { return (staged + 15) / 16 * 16; }
// Bytes [src, src + n) into dst by the warp's lanes, 16 at a time (n % 16 == 0, both 16-byte aligned).
__device__ __forceinline__ void warp_copy16(uint8_t* dst, const uint8_t* src, int n, int lane) {
  for (int i = 16 * lane; i < n; i += 16 * 32) cp_async16(dst + i, src + i, 16);
}
// Rows [row, row + kRoutedStoreRows) of an expert of n_blocks blocks in rows of `blocks` into img, by the warp's
// lanes 16 bytes at a time (cp.async, the calling lanes' commit group), or (kBulk, round 61) by lane 0 with one
// cp.async.bulk a run counted in bytes on the warp's mbarrier `landed` (its 2.5 KB in 1-3 requests instead of ~160
// through the load-store unit). Q6_K's d plane (2 bytes a block, not 16-byte aligned) stays on the lanes' cp.async8
// either way. The image is the same, so are the bits.
template <class F, bool kBulk = false>
__device__ __forceinline__ void copy_rows(uint8_t* img, const uint8_t* w, int64_t n_blocks, int64_t row, int64_t blocks,
                                          int lane, uint64_t* landed = nullptr) {
  const int nb = kRoutedStoreRows * static_cast<int>(blocks);  // the image's blocks
  const int64_t gb0 = row * blocks;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  [[maybe_unused]] const uint64_t policy = kBulk ? l2_evict_first_policy() : 0;
#endif
  // A run's bytes (the bulk form rounds them up to 16, as warp_copy16's last copy does), all announced first.
  const auto rounded = [](int n) { return static_cast<uint32_t>(n + 15) / 16 * 16; };
  [[maybe_unused]] const auto expect = [&](uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kBulk) mbar_arrive_expect_tx(landed, bytes);
#endif
  };
  const auto run = [&](uint8_t* dst, const uint8_t* src, int n) {
    if constexpr (kBulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      bulk_copy_g2s(dst, src, rounded(n), landed, policy);
#endif
    } else {
      warp_copy16(dst, src, n, lane);
    }
  };
  const bool issues = !kBulk || lane == 0;  // the bulk form's requests are lane 0's, the lanes' copies every lane's
  if constexpr (std::is_same_v<F, Q4_K>) {
    if (issues) {
      expect(rounded(nb * 144));
      run(img, w + gb0 * 144, nb * 144);
    }
  } else {
    const Q6KTiles t6(n_blocks, blocks);
    if (t6.sh != kQ6KWhole) {  // whole tiles (rows of 8 or 16k blocks): one run, the image's tiles the same
      if (issues) {
        expect(rounded(nb * 210));
        run(img, w + t6.base(gb0), nb * 210);
      }
    } else {  // the plain planes: a run of each, at the planes of the image (an expert of nb blocks)
      const Q6KTiles it(nb, blocks);  // the image's layout, as dot_rows_image reads it
      if (issues) {
        expect(rounded(nb * 128) + rounded(nb * 64) + rounded(nb * 16));
        run(img + it.ql(0), w + t6.ql(gb0), nb * 128);
        run(img + it.qh(0), w + t6.qh(gb0), nb * 64);
        run(img + it.sc(0), w + t6.sc(gb0), nb * 16);
      }
      for (int i = 8 * lane; i < nb * 2; i += 8 * 32) cp_async8(img + it.d(0) + i, w + t6.d(gb0) + i);  // 8-byte aligned
    }
  }
}

// One step of dot_rows_image: block b of each piece (none where b >= blocks).
template <class F, int kRows>
__device__ __forceinline__ void dot_rows_image_step(const uint8_t* img, int64_t blocks, const ActQ8& x, int64_t cols,
                                                    int lane, int b, float (&acc)[kRows][1]) {
  const int sub = lane % 8;
  if (b >= blocks) return;
  const int nb = kRows * static_cast<int>(blocks);
  if constexpr (std::is_same_v<F, Q4_K>) {
    const int c = sub / 2, h = sub % 2;
    const Q4_K::Act<1> a = Q4_K::load_act<1>(x, cols, b, c, h);
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const uint8_t* blk = img + (m * blocks + b) * 144;
      const uint4 head = *reinterpret_cast<const uint4*>(blk), qq = *reinterpret_cast<const uint4*>(blk + 16 + 32 * c + 16 * h);
      Q4_K::dot<1>(head, qq, qq, a, c, h, acc[m]);
    }
  } else {
    const int n = sub / 4, l0 = 8 * (sub % 4);
    const Q6KTiles t6(nb, blocks);
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const int64_t gbm = m * blocks + b;
      const uint8_t* ql = img + t6.ql(gbm) + 64 * n + l0;
      const uint2 av = *reinterpret_cast<const uint2*>(ql), bv = *reinterpret_cast<const uint2*>(ql + 32),
                  hv = *reinterpret_cast<const uint2*>(img + t6.qh(gbm) + 32 * n + l0);
      Q6_K::block_dot<1>(av, bv, hv, img, t6, gbm, b, n, l0, x, cols, acc[m]);
    }
  }
}

// The lane's part of the warp's kRows pieces from the image (piece m's blocks at m x blocks; blocks <= 4 kSteps):
// row_dot's arithmetic and order (its blocks b, b + 4, .. of a lane, every piece at each), so the bits are the
// register kernel's: the combine's 4 rows (row_dot<1, 4, 4>, one step), the routed gate-up's gate and up
// (row_dot<1, 2, 1>, Q4_K, two steps).
template <class F, int kRows = kRoutedStoreRows, int kSteps = 1>
__device__ __forceinline__ void dot_rows_image(const uint8_t* img, int64_t blocks, const ActQ8& x, int64_t cols,
                                               int lane, float (&acc)[kRows][1]) {
#pragma unroll
  for (int step = 0; step < kSteps; ++step) {
    dot_rows_image_step<F, kRows>(img, blocks, x, cols, lane, lane / 8 + 4 * step, acc);
  }
}

// The combine quantizing its own input (MoeCombine::act, round 60): the token's k pair rows of f32 (the
// routed gate-up's output) into the staging's layout (stage_act: the int8 rows, then their (d, d sum q)
// pairs), as chunks of 128 floats a warp (four blocks of 32: store_act_q8x4, rmsnorm_q8's bits), chunk
// warp + u warps of the CTA. The loads go out first (load_pair_chunks, beside the expert id and before
// the weight copies), the codes after (quantize_pair_chunks, which syncs the CTA). kQuantChunks bounds a
// warp's chunks: k cols <= 128 kQuantChunks warps (the 30B's 8 x 768 is 3 a warp of 16 warps).
// Every CTA reads the 24 KB of f32 rows (the 30B's) where it staged 7.7 KB of int8, and in exchange the
// int8 launch between the gate-up and this one (24 CTAs, 0.9 us of segment a layer in next329's trace) and
// its boundary go. H200, tg128 `-p 512 -n 128 -r 2`, one binary, BW24_COMBINE_QUANT=0 / 1 (next336):
// Qwen3-30B-A3B 683.0 / 683.6 -> 690.1 / 689.9 (+1.0 %), at depth 4096 567.9 -> 575.1; Qwen3.6-35B-A3B
// 586.7 -> 602.1 (+2.6 %). Registers (cuobjdump): Q6_K with cp.async 62 (54 without the fold), Q4_K with
// cp.async 48, Q4_K register loads 64 with an 8-byte stack (none without).
constexpr int kQuantChunks = 4;
template <int kCtaThreads>
__device__ __forceinline__ void load_pair_chunks(float4 (&v)[kQuantChunks], const float* act, int64_t n) {
  constexpr int kWarps = kCtaThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int u = 0; u < kQuantChunks; ++u) {
    const int64_t ch = warp + int64_t{u} * kWarps;
    v[u] = ch < n / 128 ? __ldcg(reinterpret_cast<const float4*>(act + ch * 128) + lane) : make_float4(0, 0, 0, 0);
  }
}
template <int kCtaThreads>
__device__ __forceinline__ ActQ8 quantize_pair_chunks(const float4 (&v)[kQuantChunks], int64_t n) {
  constexpr int kWarps = kCtaThreads / 32;
  extern __shared__ int4 staged[];
  int8_t* q = reinterpret_cast<int8_t*>(staged);
  float2* ds = reinterpret_cast<float2*>(staged + n / 16);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int u = 0; u < kQuantChunks; ++u) {
    const int64_t ch = warp + int64_t{u} * kWarps;  // warp-uniform: every lane takes the shuffles
    if (ch < n / 128) store_act_q8x4(v[u], q + ch * 128 + 4 * lane, ds + ch * 4 + lane / 8);
  }
  __syncthreads();
  return ActQ8{q, ds};
}

// The one-token Q4_K routed gate-up with each warp's gate and up rows copied by the copy engine (round 61, as
// the combine's copy_rows<F, true>): lane 0 requests the two runs (blocks x 144 bytes each) into the warp's image
// in shared memory right after the expert id, counted on the warp's mbarrier, beside the staging of the
// activation row; the dot then reads the image in row_dot<1, 2, 1>'s order, so the bits are the register
// kernel's. No registers hold the weights in flight (40 registers, no stack), so the bound is six CTAs an SM: the
// 30B's 768 CTAs in one wave of 792 slots, where the register kernel's 64 registers ran 528 + 240. Rows up to
// kGateUpBulkBlocks. H200, tg128 `-p 512 -n 128 -r 2`, one binary, BW24_GATEUP_BULK=0 / 1 (next346):
// Qwen3-30B-A3B 706.8 / 705.2 -> 719.1 / 718.7 (+1.8 %); Qwen3.6-35B-A3B 605.0 -> 583.0, whose 512 CTAs one wave
// of the register kernel holds: gemv_q8_launch takes it only past that wave (g_gate_up_bulk_always below).
// Round 38's cp.async form of the same copies (gate-up-async.patch) measured +0.6 %.
constexpr int kGateUpBulkBlocks = 8;  // 2,048 columns: the MoE shapes' hidden width
constexpr int64_t kGateUpBulkImage = int64_t{kWarpsPerCta} * 2 * kGateUpBulkBlocks * 144;  // a CTA's images
constexpr int kGateUpRegCtas = kMinCtas<Q4_K, 1, GemvOut::kGateUp>;
__global__ void __launch_bounds__(kThreads, 6)
    gate_up_bulk_kernel(const uint8_t* w, const uint8_t* w2, float* y, int64_t rows, int64_t cols, ActQ8 x, int act,
                        GemvRoute route) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerCta + warp, blocks = cols / 256;
  const uint32_t run = static_cast<uint32_t>(blocks * 144);
  __shared__ uint64_t landed[kWarpsPerCta];
  extern __shared__ int4 dyn[];
  uint8_t* img = reinterpret_cast<uint8_t*>(dyn) + async_images_at(staged_bytes(cols, 1)) + warp * 2 * run;
  if (lane == 0) {
    mbar_init(&landed[warp], 1);
    mbar_init_fence();
  }
  __syncwarp();
  pdl_begin();  // the expert comes from the router's output
  const int64_t expert = route.ids[blockIdx.y], xr = blockIdx.y / route.x_div;
  if (row < rows && lane == 0) {
    const uint64_t policy = l2_evict_first_policy();
    const int64_t at = expert * route.expert_bytes + row * run;
    mbar_arrive_expect_tx(&landed[warp], 2 * run);
    bulk_copy_g2s(img, w + at, run, &landed[warp], policy);
    bulk_copy_g2s(img + run, w2 + at, run, &landed[warp], policy);
  }
  y += int64_t{blockIdx.y} * rows;
  x.q += xr * cols;
  x.ds += xr * (cols / 32);
  stage_act(x, cols, 1);
  if (row >= rows) return;
  mbar_wait(&landed[warp], 0);
  float acc[2][1] = {};  // gate, up: row_dot<1, 2, 1>'s order
  dot_rows_image<Q4_K, 2, kGateUpBulkBlocks / 4>(img, blocks, x, cols, lane, acc);
  const float g = warp_sum(acc[0][0]), u = warp_sum(acc[1][0]);
  if (lane == 0) y[row] = gate_activation(g, act) * u;
#endif
}
std::atomic<int> g_gate_up_bulk{-1};  // -1: not yet read from BW24_GATEUP_BULK (0: off)
std::atomic<bool> g_gate_up_bulk_always{false};  // the kernel check's hook: every shape the kernel takes
std::atomic<long> g_gate_up_bulk_launches{0};
// Whether a one-token Q4_K routed gate-up of seg's rows takes gate_up_bulk_kernel (gemv_q8_launch says when).
bool gate_up_bulk_takes(const GemvSegment& seg, const void* w2, int64_t cols, const GemvRoute& route) {
  const bool aligned = reinterpret_cast<uintptr_t>(seg.w) % 16 == 0 && reinterpret_cast<uintptr_t>(w2) % 16 == 0;
  const int64_t ctas = (seg.rows + kWarpsPerCta - 1) / kWarpsPerCta * route.pairs;
  return cols % 256 == 0 && cols / 256 <= kGateUpBulkBlocks && aligned && gemv_q8_gate_up_bulk() && pdl_supported() &&
         (g_gate_up_bulk_always.load(std::memory_order_relaxed) || ctas > int64_t{kGateUpRegCtas} * sm_count());
}

// The routed down projection with the MoE combine as its epilogue (gemv_q8_combine, gemv.cuh):
// CTA (b, t) takes rows 4 kG b .. 4 kG b + 4 kG - 1 of every pair of token t (kG below), warp j of
// each row group pair j (k <= 8), four rows a warp as launch<F, kStore, 1, kRoutedStoreRows>, so each
// pair's value is the routed store launch's bit for bit. (A loop over pairs j, j + 8, ... for k > 8
// took the K-quant instances from 48-64 to 71-80 registers; models with more than 8 experts a token
// keep moe_combine.) The k x 4 kG values meet in shared memory and 4 kG threads add them into the
// residual with moe_combine_value: the combine's launch and its kernel boundary (1.6 us a MoE layer
// measured, docs/performance.md round 11) go. Grid (rows / 4 kG, tokens): 512 CTAs of 8 warps for a
// Qwen3-30B-A3B token at kG = 1, the routed store launch's count; bounded to 1,024 threads an SM
// (528 slots at kG = 1, one wave on an H200: 64 registers, where the Q6_K register form spills,
// against 72 unbounded and three CTAs an SM).
// kAsync: the weights by cp.async (above; combine_async_takes says where).
// kG: row groups of kRows a CTA (kG x 8 warps, kG x kRows output rows). Group g's warps do what a
// one-group CTA's warps do for rows (kG b + g) kRows .., so the bits are the same, and the groups
// share one staging of the token's k activation rows. Every CTA stages all k of them (7.7 KB for a
// Qwen3-30B-A3B token: 3.9 MB into the SMs over the 512 CTAs of a layer, beside 10.3 MB of Q6_K
// weights): thread 0's stamps (round 49, next272) put 8,375 cycles between the wait and the end of
// the staging of the cp.async form (7,201 with the weights already in L2), the dot 2,037. Two groups
// (256 CTAs of 16 warps, two an SM, the same 1,024 threads) stage 2.0 MB: H200, tg128 `-p 16 -r 2`,
// one binary (next273): Qwen3-30B-A3B 654.2 / 654.7 -> 661.1 / 661.3, Qwen3.6-35B-A3B 572.9 -> 575.3.
// kQuant (MoeCombine::act): the launch quantizes the pairs' f32 rows itself (load_pair_chunks and
// quantize_pair_chunks, above) in place of staging the int8 rows an rmsnorm_q8 launch wrote: that launch
// and its boundary go.
// kBulk (with kAsync and kQuant, two groups): the warp's rows by copy_rows<F, true>, lane 0's cp.async.bulk on the
// warp's mbarrier, in place of ~160 16-byte cp.async a warp (2.5 KB of Q6_K: 3 x 4 blocks). Round 38's stamps
// put the Q6_K dot phase at 10.3 MB in 4.6 us (2.2 TB/s) with every byte requested at once; the load-store
// unit's 16-byte requests are the likely limit (not profiled): the copy engine takes a run in one request, as
// the streamed GEMV's producer does (4+ TB/s there). H200, tg128 `-p 512 -n 128 -r 2`, one binary (next344),
// main's forms / Q6_K bulk / Q6_K and Q4_K bulk: Qwen3-30B-A3B 692.7 / 693.7 -> 698.1 / 698.4 -> 706.7 / 706.4
// (+2.0 %), at depth 4096 577.0 -> 585.0; Qwen3.6-35B-A3B 603.6 -> 603.7 -> 605.8. The 30B's 3-block Q4_K rows,
// which lost with the lanes' cp.async (next277, next338), gain with it. Registers: Q6_K 62 -> 52, Q4_K 64 -> 47.
template <class F, bool kAsync = false, int kG = 1, bool kQuant = false, bool kBulk = false>
__global__ void __launch_bounds__(kThreads * kG, 4 / kG) gemv_q8_combine_kernel(const uint8_t* w, int64_t rows,
                                                                            int64_t cols, ActQ8 x, GemvRoute route,
                                                                            MoeCombine c) {
  constexpr int kRows = kRoutedStoreRows, kOut = kRows * kG;  // kOut: the CTA's output rows
  __shared__ float value[kG][kWarpsPerCta][kRows];
  const int lane = threadIdx.x % 32, warp_all = threadIdx.x / 32, grp = kG == 1 ? 0 : warp_all / kWarpsPerCta,
            warp = kG == 1 ? warp_all : warp_all % kWarpsPerCta, t = blockIdx.y, k = c.k;
  const int64_t row0 = int64_t{blockIdx.x} * kOut, row = row0 + grp * kRows, blocks = cols / F::kBlockElems,
                n_blocks = rows * blocks;
  pdl_begin();  // the experts come from the router's output
  const int64_t pair0 = int64_t{t} * k;
  // Everything the warps and the epilogue read besides the activations is loaded here, beside the
  // staging's loads: the pair's expert, the routing weights and, for threads 0-3, the residual and
  // the shared expert's output and gate. Read after the staging and the sums, as before, each was
  // one more L2 round trip between the wait and the output. The epilogue's values wait in shared
  // memory (stored after the staging), not in registers across the dot (64 a thread at most here).
  __shared__ float epi_w[kMoeMaxUsed], epi_resid[kOut], epi_shared[kOut], epi_gate;
  int64_t expert = 0;
  ActQ8 xs = x;  // the activation rows where the dots read them
  float4 fv[kQuantChunks];  // kQuant: the warp's 128-float chunks of the pairs' f32 rows
  if constexpr (kAsync) {
    // The cp.async form orders its requests by what waits on them: the expert id first (a volatile
    // load, so that it is not scheduled after the volatile copies below: the weights' addresses wait
    // on it), then the staging of the token's rows, then the weights. The rows (L2 hits) then land
    // ahead of the weights instead of queueing behind the CTA's 20-40 KB of copies (8,375 cycles
    // from the wait to the end of the staging in round 49's stamps). H200, tg128 `-p 16 -r 2`, one
    // binary (next277): Qwen3-30B-A3B 660.1 / 659.6 / 660.3 -> 661.4 / 661.5, Qwen3.6-35B-A3B 575.1
    // -> 577.0. The staging first, before the id, measured 659.3 / 658.6 (it delays the weights); the
    // weights in a commit group a row with each row's dot once its group landed lost 1.8-3.2 %
    // (next275, next276).
    if (warp < k) {
      int id;
      asm volatile("ld.global.s32 %0, [%1];\n" : "=r"(id) : "l"(route.ids + pair0 + warp));
      expert = id;
    }
  } else {
    expert = warp < k ? route.ids[pair0 + warp] : 0;
  }
  // Then the input: the f32 rows' loads (kQuant, quantized below once the weight copies are out) or the
  // int8 rows' cp.async staging.
  if constexpr (kQuant)
    load_pair_chunks<kThreads * kG>(fv, c.act + pair0 * cols, int64_t{k} * cols);
  else if constexpr (kAsync)
    xs = stage_act_async<kThreads * kG>(ActQ8{x.q + pair0 * cols, x.ds + pair0 * (cols / 32)}, cols, k);
  const int64_t out_i = int64_t{t} * rows + row0 + (threadIdx.x < kOut ? threadIdx.x : 0);
  const float wv = static_cast<int>(threadIdx.x) < k ? c.weights[pair0 + threadIdx.x] : 0.0f;
  float resid = 0.0f, shared = 0.0f, gate = 0.0f;
  if (threadIdx.x < kOut) {
    resid = c.x[out_i];
    if (c.shared_out) {
      shared = c.shared_out[out_i];
      gate = c.shared_gate[t];
    }
  }
  uint8_t* img = nullptr;
  __shared__ uint64_t landed[kBulk ? kG * kWarpsPerCta : 1];  // kBulk: a warp's copies, counted in bytes
  if constexpr (kAsync) {  // the warp's rows into its image (dynamic shared memory after the staging)
    extern __shared__ int4 dyn[];
    img = reinterpret_cast<uint8_t*>(dyn) + async_images_at(staged_bytes(cols, k)) + warp_all * kAsyncRowBytes<F> * kRows;
    if constexpr (kBulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if (warp < k) {
        if (lane == 0) {
          mbar_init(&landed[warp_all], 1);
          mbar_init_fence();
        }
        __syncwarp();
        copy_rows<F, true>(img, w + expert * route.expert_bytes, n_blocks, row, blocks, lane, &landed[warp_all]);
      }
#endif
    } else {
      if (warp < k) copy_rows<F>(img, w + expert * route.expert_bytes, n_blocks, row, blocks, lane);
    }
    cp_async_commit();
    if constexpr (kQuant) {
      xs = quantize_pair_chunks<kThreads * kG>(fv, int64_t{k} * cols);
    } else {
      cp_async_wait<1>();  // the staging's group (the weights' is the later one)
      __syncthreads();
    }
  } else if constexpr (kQuant) {
    xs = quantize_pair_chunks<kThreads * kG>(fv, int64_t{k} * cols);
  } else {
    xs.q += pair0 * cols;
    xs.ds += pair0 * (cols / 32);
    stage_act<kThreads * kG>(xs, cols, k);  // the token's k activation rows
  }
  if (static_cast<int>(threadIdx.x) < k) epi_w[threadIdx.x] = wv;
  if (threadIdx.x < kOut) {
    epi_resid[threadIdx.x] = resid;
    epi_shared[threadIdx.x] = shared;
    if (threadIdx.x == 0) epi_gate = gate;
  }
  if (warp < k) {
    const int j = warp;
    const uint8_t* base = w + expert * route.expert_bytes;
    const uint8_t* wj[kRows] = {base, base, base, base};
    const ActQ8 xj{xs.q + j * cols, xs.ds + j * (cols / 32)};
    float acc[kRows][1] = {};
    if constexpr (kAsync) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (kBulk) mbar_wait(&landed[warp_all], 0);
#endif
      cp_async_wait<0>();
      __syncwarp();  // every lane's copies landed
      dot_rows_image<F>(img, blocks, xj, cols, lane, acc);
    } else {
      F::template row_dot<1, kRows, kRows>(wj, n_blocks, row, blocks, xj, cols, lane, acc);
    }
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const float v = warp_sum(acc[m][0]);
      if (lane == 0) value[grp][j][m] = v;
    }
  }
  __syncthreads();
  if (threadIdx.x < kOut) {
    const int e = threadIdx.x, m = e % kRows, g = e / kRows;
    c.x[out_i] = moe_combine_value(
        epi_resid[e], epi_w, [&](int j) { return value[g][j][m]; }, k, c.shared_out ? &epi_shared[e] : nullptr, epi_gate);
  }
}

std::atomic<int> g_combine_async{-1};
std::atomic<int> g_combine_wide{-1};
std::atomic<int> g_combine_quant{-1};  // -1: not yet read from BW24_COMBINE_QUANT (0: off)
std::atomic<int> g_combine_bulk{-1};  // -1: not yet read from BW24_COMBINE_BULK (0: off)
std::atomic<long> g_combine_async_launches{0}, g_combine_wide_launches{0}, g_combine_bulk_launches{0};

// Where the combine takes the cp.async form: rows of up to kAsyncMaxBlocks blocks (Q6_K 4, Q4_K 2). H200, tg128 `-p 16 -r 2`, two rounds, one binary (next227): async for both types
// Qwen3-30B-A3B 597.5 / 597.2 -> 600.0 / 598.6, Qwen3.6-35B-A3B 538.7 / 536.1 -> 545.0 / 545.9;
// for Q6_K only 604.6 / 605.0 and 541.7 / 540.8. So the 30B's Q4_K rows of 3 blocks (768 wide)
// lose with it (the trace: 5.30 -> 5.83 us a launch) and the 35B's of 2 (512 wide) gain. Asked again
// with round 50's order (the staging ahead of the weights, next277): 30B 661.4 -> 648.9 with the
// 3-block Q4_K rows taking it too.
// Where the combine takes copy_rows<F, true>: the cp.async form's conditions, but rows of up to kAsyncBlocks blocks
// of Q4_K too (the 30B's 3-block rows lost with the lanes' cp.async, next277 / next338, and gain with the bulk
// copies). Taken only by the two-group launch that quantizes its input (every MoE shape here).
template <class F>
bool combine_bulk_takes(int64_t cols, int64_t staged) {
  return cols / F::kBlockElems <= kAsyncBlocks && staged <= kMaxStagedBytes && gemv_q8_combine_async() &&
         gemv_q8_combine_bulk() && pdl_supported();  // cp.async.bulk: sm_90 on, as PDL
}
template <class F>
bool combine_async_takes(int64_t cols, int64_t staged) {
  return cols / F::kBlockElems <= kAsyncMaxBlocks<F> && staged <= kMaxStagedBytes && gemv_q8_combine_async();
}
// The async launch's dynamic shared memory: the staging, then the warps' images. allow_smem sets the
// kernel's limit once a device, so it allows the largest launch's (the staging's cap).
template <class F>
constexpr int64_t kAsyncImageBytes = kWarpsPerCta * kRoutedStoreRows * kAsyncRowBytes<F>;
template <class F, int kG = 1>
size_t async_smem(int64_t staged) { return static_cast<size_t>(async_images_at(staged) + kG * kAsyncImageBytes<F>); }
template <class F, int kG = 1, bool kQuant = false, bool kBulk = false>
cudaError_t allow_async_smem() {
  return allow_smem<gemv_q8_combine_kernel<F, true, kG, kQuant, kBulk>>(
      static_cast<size_t>(kMaxStagedBytes + kG * kAsyncImageBytes<F>));
}

// Where the combine takes two row groups a CTA (kG = 2, the kernel's comment says why): Q4_K and Q6_K
// (kCombineWide) over rows a multiple of 8 (every MoE shape). launch_combine and routed_occupancy ask both.
template <class F>
constexpr bool kCombineWide = std::is_same_v<F, Q4_K> || std::is_same_v<F, Q6_K>;
bool combine_two_groups(int64_t rows) { return gemv_q8_combine_wide() && rows % (2 * kRoutedStoreRows) == 0; }

template <class F, int kG>
cudaError_t launch_combine_g(const uint8_t* w, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                             const MoeCombine& c, cudaStream_t s) {
  const int64_t smem = staged_bytes(cols, c.k);
  const dim3 grid(static_cast<unsigned>(rows / (kRoutedStoreRows * kG)), static_cast<unsigned>(route.pairs / c.k));
  const dim3 block(kThreads * kG);
  if constexpr (kCombineAsync<F>) {
    // cp.async's 16-byte copies need every expert 16-byte aligned (a Q6_K expert of rows x blocks
    // with rows x blocks not a multiple of 8 is not: it keeps the register loads).
    const bool aligned = reinterpret_cast<uintptr_t>(w) % 16 == 0 && route.expert_bytes % 16 == 0;
    if constexpr (kG == 2)
      if (aligned && c.act && combine_bulk_takes<F>(cols, smem)) {
        g_combine_bulk_launches.fetch_add(1, std::memory_order_relaxed);
        BW24_CUDA_TRY((allow_async_smem<F, kG, true, true>()));
        return launch_pdl(gemv_q8_combine_kernel<F, true, kG, true, true>, grid, block, async_smem<F, kG>(smem), s, w,
                          rows, cols, x, route, c);
      }
    if (aligned && combine_async_takes<F>(cols, smem)) {
      g_combine_async_launches.fetch_add(1, std::memory_order_relaxed);
      if constexpr (kG == 2)
        if (c.act) {
          BW24_CUDA_TRY((allow_async_smem<F, kG, true>()));
          return launch_pdl(gemv_q8_combine_kernel<F, true, kG, true>, grid, block, async_smem<F, kG>(smem), s, w,
                            rows, cols, x, route, c);
        }
      BW24_CUDA_TRY((allow_async_smem<F, kG>()));
      return launch_pdl(gemv_q8_combine_kernel<F, true, kG>, grid, block, async_smem<F, kG>(smem), s, w, rows, cols,
                        x, route, c);
    }
  }
  if constexpr (kG == 2 && kCombineWide<F>)
    if (c.act)
      return launch_pdl(gemv_q8_combine_kernel<F, false, kG, true>, grid, block, staged_smem(smem), s, w, rows, cols,
                        x, route, c);
  return launch_pdl(gemv_q8_combine_kernel<F, false, kG>, grid, block, staged_smem(smem), s, w, rows, cols, x, route,
                    c);
}

template <class F>
cudaError_t launch_combine(const uint8_t* w, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                           const MoeCombine& c, cudaStream_t s) {
  if (cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  if constexpr (kCombineWide<F>)
    if (combine_two_groups(rows)) {
      g_combine_wide_launches.fetch_add(1, std::memory_order_relaxed);
      return launch_combine_g<F, 2>(w, rows, cols, x, route, c, s);
    }
  return launch_combine_g<F, 1>(w, rows, cols, x, route, c, s);
}

}  // namespace

namespace {
std::atomic<int> g_streamed{-1};  // -1: not yet read from BW24_GEMV_STREAM
}
bool gemv_q8_streamed() { return env_switch(g_streamed, "BW24_GEMV_STREAM"); }
void gemv_q8_set_streamed(bool on) { g_streamed.store(on ? 1 : 0, std::memory_order_relaxed); }

bool gemv_q8_supports(uint32_t t) {
  return t == kQ4_0 || t == kQ4_1 || t == kQ5_0 || t == kQ5_1 || t == kQ8_0 || t == kQ4_K || t == kQ5_K || t == kQ6_K ||
         t == kIQ4_XS;
}

namespace {
// The dispatch table of the int8 family: one entry per format.
cudaError_t gemv_q8_launch(const GemvSegment* segs, int n_segs, const void* w2, uint32_t type, int64_t cols, ActQ8 x,
                           int nt, GemvOut out, int act, const GemvRoute& route, cudaStream_t s,
                           GemvChain chain = GemvChain::kPlain, bool* chained = nullptr, const CtaRoom& room = {}) {
  if (chained) *chained = false;
  if (nt < 1 || nt > kGemvMaxTokens || cols <= 0 || n_segs < 1 || n_segs > kMaxGemvSegments ||
      (out == GemvOut::kGateUp && (!w2 || n_segs != 1)))
    return cudaErrorInvalidValue;
  // Expert matrices start every expert_bytes: a stride off 16 bytes would misalign the 16-byte
  // weight loads (a sticky misaligned-address fault, not an error code).
  if (route.ids && (nt != 1 || n_segs != 1 || route.pairs < 1 || route.pairs > 65535 || route.x_div < 1 ||
                    route.expert_bytes % 16 != 0))
    return cudaErrorInvalidValue;
  Launch a{{}, static_cast<const uint8_t*>(w2), cols, x, act, route, s};
  for (int i = 0; i < n_segs; ++i) {
    if (segs[i].rows <= 0) return cudaErrorInvalidValue;
    a.seg.w[i] = static_cast<const uint8_t*>(segs[i].w);
    a.seg.y[i] = segs[i].y;
    a.seg.rows[i] = segs[i].rows;
  }
  a.seg.n = n_segs;
  a.rows_warp = rows_per_warp(a, nt, out);
  const int64_t rows_per_cta = kWarpsPerCta * a.rows_warp;
  unsigned ctas = 0;
  for (int i = 0; i < n_segs; ++i) {
    ctas += static_cast<unsigned>((segs[i].rows + rows_per_cta - 1) / rows_per_cta);
    a.seg.cta_end[i] = ctas;
  }
  if (nt == 1 && !route.ids && gemv_q8_streamed() && pdl_supported()) {
    bool taken = false;
    const cudaError_t e = gemv_stream(a.seg, a.w2, type, cols, x, out, act, s, &taken, chain, room);
    if (chained) *chained = taken && e == cudaSuccess;
    if (taken) return e;
  }
  if (x.norm_parts) return cudaErrorNotSupported;  // a folded norm's input: only the streamed kernel applies 1 / rms
  // The routed one-token Q4_K gate-up by gate_up_bulk_kernel where its grid needs more than one wave of the register
  // kernel (kGateUpRegCtas an SM). Where one wave holds it (Qwen3.6-35B-A3B: 512 CTAs) the bulk kernel lost (next346:
  // 605.0 -> 583.0 tok/s; six CTAs an SM gather the grid on fewer SMs); past it (Qwen3-30B-A3B: 768) it gains.
  if (type == kQ4_K && nt == 1 && out == GemvOut::kGateUp && route.ids && gate_up_bulk_takes(segs[0], w2, cols, route)) {
    g_gate_up_bulk_launches.fetch_add(1, std::memory_order_relaxed);
    BW24_CUDA_TRY(allow_smem<gate_up_bulk_kernel>(static_cast<size_t>(kMaxStagedBytes + 16 + kGateUpBulkImage)));
    const dim3 grid(static_cast<unsigned>((segs[0].rows + kWarpsPerCta - 1) / kWarpsPerCta),
                    static_cast<unsigned>(route.pairs));
    const size_t smem = static_cast<size_t>(async_images_at(staged_bytes(cols, 1)) + kWarpsPerCta * 2 * (cols / 256) * 144);
    return launch_pdl(gate_up_bulk_kernel, grid, dim3(kThreads), smem, s, static_cast<const uint8_t*>(segs[0].w),
                      static_cast<const uint8_t*>(w2), segs[0].y, segs[0].rows, cols, x, act, route);
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
                          int nt, GemvOut out, int act, cudaStream_t s, GemvChain chain, bool* chained) {
  return gemv_q8_launch(segs, n_segs, w2, type, cols, x, nt, out, act, GemvRoute{}, s, chain, chained);
}

cudaError_t gemv_q8(const void* w, const void* w2, uint32_t type, int64_t rows, int64_t cols, ActQ8 x, int nt,
                    float* y, GemvOut out, int act, cudaStream_t s, const GemvRoute* route, const CtaRoom* room) {
  const GemvSegment seg{w, y, rows};
  return gemv_q8_launch(&seg, 1, w2, type, cols, x, nt, out, act, route ? *route : GemvRoute{}, s, GemvChain::kPlain,
                        nullptr, room ? *room : CtaRoom{});
}

namespace {
// One matrix (rows x cols at w, into y) as the streamed kernel's segments.
Segments one_segment(const void* w, float* y, int64_t rows) {
  Segments seg{};
  seg.n = 1;
  seg.w[0] = static_cast<const uint8_t*>(w);
  seg.y[0] = y;
  seg.rows[0] = rows;
  return seg;
}
std::atomic<int> g_gate_up_q8{-1};  // -1: not yet read from BW24_GATEUP_Q8 (0: off)
std::atomic<bool> g_gate_up_q8_always{false};
}
bool gemv_q8_gate_up_q8_on() { return env_switch(g_gate_up_q8, "BW24_GATEUP_Q8"); }
void gemv_q8_set_gate_up_q8(bool on) { g_gate_up_q8.store(on ? 1 : 0, std::memory_order_relaxed); }
bool gemv_q8_gate_up_q8_always() { return g_gate_up_q8_always.load(std::memory_order_relaxed); }
void gemv_q8_set_gate_up_q8_always(bool on) { g_gate_up_q8_always.store(on, std::memory_order_relaxed); }

cudaError_t gemv_q8_gate_up_q8(const void* w, const void* w2, uint32_t type, int64_t rows, int64_t cols, ActQ8 x,
                               float* y, int act, int8_t* q, float2* ds, cudaStream_t s, bool* written) {
  *written = false;
  if (!w || !w2 || !y || !q || !ds || rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  // gemv_stream checks the format, alignment and shape itself, and refuses what its kQ8 instance does not take.
  if (gemv_q8_gate_up_q8_on() && gemv_q8_streamed() && pdl_supported()) {
    const Segments seg = one_segment(w, y, rows);
    bool taken = false;
    const cudaError_t e = gemv_stream(seg, static_cast<const uint8_t*>(w2), type, cols, x, GemvOut::kGateUp, act, s,
                                      &taken, GemvChain::kPlain, {}, q, ds);
    if (taken) {
      *written = e == cudaSuccess;
      return e;
    }
  }
  return gemv_q8(w, w2, type, rows, cols, x, 1, y, GemvOut::kGateUp, act, s);
}

namespace {
std::atomic<int> g_norm_fold{-1};  // -1: not yet read from BW24_NORM_FOLD (0: off)
}
bool gemv_q8_norm_fold_on() { return env_switch(g_norm_fold, "BW24_NORM_FOLD"); }
void gemv_q8_set_norm_fold(bool on) { g_norm_fold.store(on ? 1 : 0, std::memory_order_relaxed); }
bool gemv_q8_takes_folded(uint32_t type, GemvOut out, int64_t rows, int64_t cols) {
  return gemv_q8_streams(type, out) && stream_takes_folded(type, out, rows, cols);
}

cudaError_t gemv_q8_add_normed(const void* w, uint32_t type, int64_t rows, int64_t cols, ActQ8 x, float* y,
                               const NormOut& norm, cudaStream_t s, const CtaRoom* room, bool* written) {
  *written = false;
  if (!w || !y || !norm.w || !norm.q || !norm.ds || !norm.parts || rows <= 0 || cols <= 0 || x.norm_parts)
    return cudaErrorInvalidValue;
  // gemv_stream checks the format, shape and grid, and refuses what its kFoldNormOut instances do not take.
  if (gemv_q8_norm_fold_on() && gemv_q8_streamed() && pdl_supported()) {
    const Segments seg = one_segment(w, y, rows);
    bool taken = false;
    const cudaError_t e = gemv_stream(seg, nullptr, type, cols, x, GemvOut::kAdd, 0, s, &taken, GemvChain::kPlain,
                                      room ? *room : CtaRoom{}, nullptr, nullptr, &norm);
    if (taken) {
      *written = e == cudaSuccess;
      return e;
    }
  }
  return gemv_q8(w, nullptr, type, rows, cols, x, 1, y, GemvOut::kAdd, 0, s, nullptr, room);
}

long gemv_q8_combine_async_launches() { return g_combine_async_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_async() { return env_switch(g_combine_async, "BW24_COMBINE_ASYNC"); }
void gemv_q8_set_combine_async(bool on) { g_combine_async.store(on ? 1 : 0, std::memory_order_relaxed); }
long gemv_q8_gate_up_bulk_launches() { return g_gate_up_bulk_launches.load(std::memory_order_relaxed); }
bool gemv_q8_gate_up_bulk() { return env_switch(g_gate_up_bulk, "BW24_GATEUP_BULK"); }
void gemv_q8_set_gate_up_bulk(bool on) { g_gate_up_bulk.store(on ? 1 : 0, std::memory_order_relaxed); }
void gemv_q8_set_gate_up_bulk_always(bool on) { g_gate_up_bulk_always.store(on, std::memory_order_relaxed); }
long gemv_q8_combine_bulk_launches() { return g_combine_bulk_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_bulk() { return env_switch(g_combine_bulk, "BW24_COMBINE_BULK"); }
void gemv_q8_set_combine_bulk(bool on) { g_combine_bulk.store(on ? 1 : 0, std::memory_order_relaxed); }
long gemv_q8_combine_wide_launches() { return g_combine_wide_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_wide() { return env_switch(g_combine_wide, "BW24_COMBINE_WIDE"); }
void gemv_q8_set_combine_wide(bool on) { g_combine_wide.store(on ? 1 : 0, std::memory_order_relaxed); }

bool gemv_q8_combine_supports(uint32_t type, int64_t rows, int64_t cols, int k) {
  return gemv_q8_supports(type) && rows > 0 && rows % kRoutedStoreRows == 0 && cols > 0 && cols % 32 == 0 && k >= 1 &&
         k <= kWarpsPerCta;
}

// The launch quantizes its own input (MoeCombine::act) where it takes two row groups a CTA (Q4_K, Q6_K),
// the token's k rows are whole 128-float chunks, at most kQuantChunks a warp of its 16, and their int8
// staging fits.
bool gemv_q8_combine_quantizes(uint32_t type, int64_t rows, int64_t cols, int k) {
  const int64_t n = int64_t{k} * cols;
  return gemv_q8_combine_supports(type, rows, cols, k) && (type == kQ4_K || type == kQ6_K) && combine_two_groups(rows) &&
         n % 128 == 0 && n <= 128 * kQuantChunks * 2 * kWarpsPerCta && staged_bytes(cols, k) <= kMaxStagedBytes;
}
bool gemv_q8_combine_quant() { return env_switch(g_combine_quant, "BW24_COMBINE_QUANT"); }

// The dispatch table of the combining launch: one entry per int8-path format.
cudaError_t gemv_q8_combine(const void* w, uint32_t type, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                            const MoeCombine& c, cudaStream_t s) {
  if (!gemv_q8_combine_supports(type, rows, cols, c.k) || !route.ids || !c.x || !c.weights ||
      (c.shared_out && !c.shared_gate) || route.x_div != 1 || route.pairs < c.k || route.pairs % c.k != 0 ||
      route.pairs / c.k > 65535 || route.expert_bytes % 16 != 0 || rows / kRoutedStoreRows > INT32_MAX ||
      (c.act && !gemv_q8_combine_quantizes(type, rows, cols, c.k)))
    return cudaErrorInvalidValue;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  switch (type) {
    case kQ4_0: return launch_combine<Legacy<Q4_0>>(wb, rows, cols, x, route, c, s);
    case kQ4_1: return launch_combine<Legacy<Q4_1>>(wb, rows, cols, x, route, c, s);
    case kQ5_0: return launch_combine<Legacy<Q5_0>>(wb, rows, cols, x, route, c, s);
    case kQ5_1: return launch_combine<Legacy<Q5_1>>(wb, rows, cols, x, route, c, s);
    case kQ8_0: return launch_combine<Legacy<Q8_0>>(wb, rows, cols, x, route, c, s);
    case kQ4_K: return launch_combine<Q4_K>(wb, rows, cols, x, route, c, s);
    case kQ5_K: return launch_combine<Q5_K>(wb, rows, cols, x, route, c, s);
    case kQ6_K: return launch_combine<Q6_K>(wb, rows, cols, x, route, c, s);
    case kIQ4_XS: return launch_combine<IQ4_XS>(wb, rows, cols, x, route, c, s);
    default: return cudaErrorInvalidValue;
  }
}

namespace {
template <auto kKernel>
cudaError_t occupancy_of(size_t smem, GemvOccupancy* o, int threads = kThreads) {
  o->threads = threads;
  return kernel_occupancy<kKernel>(threads, smem, &o->regs, &o->ctas_per_sm);
}
// The combine instance launch_combine_g<F, kG> takes over rows of `cols` (cp.async or register loads).
template <class F, int kG>
cudaError_t combine_occupancy(int64_t cols, int64_t staged, GemvOccupancy* o) {
  if constexpr (kCombineAsync<F> && kG == 2) {
    if (combine_bulk_takes<F>(cols, staged)) {  // the runner's quantizing launch (MoeCombine::act)
      if (const cudaError_t e = allow_async_smem<F, kG, true, true>(); e != cudaSuccess) return e;
      return occupancy_of<gemv_q8_combine_kernel<F, true, kG, true, true>>(async_smem<F, kG>(staged), o, kG * kThreads);
    }
  }
  if constexpr (kCombineAsync<F>) {
    if (combine_async_takes<F>(cols, staged)) {
      if (const cudaError_t e = allow_async_smem<F, kG>(); e != cudaSuccess) return e;
      return occupancy_of<gemv_q8_combine_kernel<F, true, kG>>(async_smem<F, kG>(staged), o, kG * kThreads);
    }
  }
  return occupancy_of<gemv_q8_combine_kernel<F, false, kG>>(staged_smem(staged), o, kG * kThreads);
}
template <class F>
cudaError_t routed_occupancy(int64_t gate_cols, int64_t down_cols, int k, GemvOccupancy* gate_up,
                             GemvOccupancy* combine) {
  constexpr auto kGateUpKernel = gemv_q8_kernel<F, 1, GemvOut::kGateUp, 1>;
  // The register kernel's: it decides where the bulk kernel (gate_up_bulk_kernel, six an SM by its bound) runs.
  if (const cudaError_t e = occupancy_of<kGateUpKernel>(staged_smem(staged_bytes(gate_cols, 1)), gate_up);
      e != cudaSuccess)
    return e;
  const int64_t staged = staged_bytes(down_cols, k);
  if constexpr (kCombineWide<F>)
    if (combine_two_groups(gate_cols))  // the down's rows: the hidden width, the gate-up's columns
      return combine_occupancy<F, 2>(down_cols, staged, combine);
  return combine_occupancy<F, 1>(down_cols, staged, combine);
}
}  // namespace

cudaError_t gemv_q8_routed_occupancy(uint32_t type, int64_t gate_cols, int64_t down_cols, int k,
                                     GemvOccupancy* gate_up, GemvOccupancy* combine) {
  if (!gate_up || !combine || gate_cols <= 0 || down_cols <= 0 || k < 1 || k > kWarpsPerCta)
    return cudaErrorInvalidValue;
  switch (type) {
    case kQ4_K: return routed_occupancy<Q4_K>(gate_cols, down_cols, k, gate_up, combine);
    case kQ5_K: return routed_occupancy<Q5_K>(gate_cols, down_cols, k, gate_up, combine);
    case kQ6_K: return routed_occupancy<Q6_K>(gate_cols, down_cols, k, gate_up, combine);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
