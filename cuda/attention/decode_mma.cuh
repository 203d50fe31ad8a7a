// Flash decode's two products on tensor cores (split_kernel, flash_decode.cu), for head sizes 128 and
// 256 over f16 and q8_0 caches: the scores S = Q K^T and the unnormalized output O = P V of one split (up to
// 128 keys), warp w taking keys 16w .. 16w + 15 of the split in both, one mma.sync m16n8k16 (f16
// operands, f32 accumulators; cuda/common/mma.cuh has the fragment layouts) per 16 x 16 piece.
//
// Why: the scalar form (two threads a key for the scores, a lane a row slice for P V) issued ~2,550
// instructions a warp at 14.5 cycles each at depth 4096 (ncu, round 16): a chain of dependent FMAs
// and shared loads, not bytes (16.9 MB in 21.4 us, 0.79 TB/s). A warp's scores of 16 keys x 4 heads
// are 16 mma here (8 k-steps, hi and lo) where the scalar form took 2 x 256 FMAs a thread pair.
//
// Exactness: the cache values are exact f16 (an f16 cache's own, q8_0's int8 quants; the scales are
// applied in f32). The f32 operands (the query rows, P) go in as two f16 parts, hi = f16(x) and lo =
// f16(x - hi), each multiplied into the same accumulator: 22 bits of x, f32's error level (kernel
// check's 1e-5 against lib/ref). P goes in scaled by 2^6 (and O out by 2^-6, both exact), so that
// its lo part stays clear of f16's subnormals; q8_0's P V multiplies each key's block scale into P
// (B_b = 2^6 d[key][b] P), which stays finite while d < 1,024 (|V| < 130,000).
//
// Head grouping (flash_decode's head_groups) must not change a head's bits: a head is one column n of
// the B operand and of the accumulators, and an mma's column n depends only on A and column n of B.
// Every instance of an f16 or q8_0 cache at D = 128 or 256 (one head, four heads, any) takes this path.
//
// Parts: the fragments below hold kD = 128 dims of a head. At D = 256 the kernel walks two parts
// (dims 0..127, 128..255): the scores add both parts' products into the same accumulators, and P V
// fills tiles 0..7 from part 0's values and 8..15 from part 1's, so that a lane holds one part's keys
// or values at a time (~32 registers each) and the whole head's accumulators (64): the instance stays
// within two CTAs an SM. Why D = 256: the Qwen3.5 / Qwen3.6 gated-attention layers; their scalar path
// took 12.4-12.8 us a layer in the captured step against ~7 us at D = 128 (bw24-kernel-trace, round 26).
//
// Element maps (lane l: r = l / 4, c = l % 4; these are permutations of the dot products' index,
// chosen so that a lane's loads are whole vectors):
//   scores, k-step s = 2b + h (b: a block of 32 elements): A row r / r + 8 = keys 16w + r / + 8, the
//     lane's k columns 2c, 2c + 1, 2c + 8, 2c + 9 = elements 32b + 8c + 4h + {0, 1, 2, 3}; so lane
//     l holds elements 32b + 8c .. + 7 of its two keys (f16: 16 bytes a block, q8_0: 8 and a scale).
//   P V (O^T = V^T P^T), k = the warp's 16 keys in order, tile T of the 8 row tiles (16 dims each):
//     f16: rows r / r + 8 of tile T = dims 16r + 2T / + 1, so a lane reads dims 16r .. + 15 (32
//          bytes) of keys 2c, 2c + 1, 2c + 8, 2c + 9;
//     q8_0: tile T = 2b + e of block b, rows r / r + 8 = dims 32b + 4r + 2e / + 1, so a lane reads 4
//          bytes a block of those keys, and each tile lies in one block (one scale a key).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_fp16.h>

#include "cuda/attention/kv_load.cuh"
#include "cuda/common/mma.cuh"

namespace bw24::cuda::decode_mma {

// Per part of kD dims: k-steps of the scores, row tiles of P V, 32-element blocks.
constexpr int kD = 128, kSteps = kD / 16, kTiles = kD / 16, kBlocks = kD / 32;
constexpr float kPScale = 64.0f, kPUnscale = 1.0f / 64.0f;  // powers of two: exact

template <class Kv, int D>
constexpr bool kTakes = (D == kD || D == 2 * kD) && (std::is_same_v<Kv, const __half*> || std::is_same_v<Kv, KvQ8>);
template <int D>
constexpr int kParts = D / kD;  // parts of a head
template <int D>
constexpr int kHeadTiles = kParts<D> * kTiles;  // P V row tiles of a head

__device__ __forceinline__ uint32_t h2_bits(__half2 v) { return *reinterpret_cast<const uint32_t*>(&v); }
__device__ __forceinline__ __half2 bits_h2(uint32_t v) { return *reinterpret_cast<const __half2*>(&v); }

// (x0, x1) as the f16 pairs hi = f16(x) and lo = f16(x - hi).
__device__ __forceinline__ void split2(float x0, float x1, uint32_t& hi, uint32_t& lo) {
  hi = pack_f16(x0, x1);
  const float2 back = __half22float2(bits_h2(hi));
  lo = pack_f16(x0 - back.x, x1 - back.y);
}

// A q8_0 row's four block scales (f16, one 8-byte load; row: the first element of a part, so its block
// index is a multiple of four) and scale b of them as f32.
__device__ __forceinline__ uint2 row_scales(const KvQ8& row) {
  return *reinterpret_cast<const uint2*>(row.d + (row.e >> 5));
}
__device__ __forceinline__ float block_scale(const uint2& d, int b) {
  return __half2float(reinterpret_cast<const __half*>(&d)[b]);
}

// Four int8 (bytes 0..3 of w) as the f16 pairs (b0, b1) and (b2, b3), exactly: the byte with its
// sign bit flipped is u = x + 128 in 0..255, and the f16 with bits 0x6400 | u is 1024 + u.
__device__ __forceinline__ void s8x4_f16(uint32_t w, uint32_t& lo, uint32_t& hi) {
  const uint32_t u = w ^ 0x80808080u;
  const __half2 bias = __float2half2_rn(1152.0f);  // 1024 + 128
  lo = h2_bits(__hsub2(bits_h2(__byte_perm(u, 0x64646464u, 0x4140)), bias));
  hi = h2_bits(__hsub2(bits_h2(__byte_perm(u, 0x64646464u, 0x4342)), bias));
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// The score product's B operand: column r = the CTA's query head r (zeros where r >= G), hi and lo
// parts, k-step s = 2b + h: b0 = elements 32b + 8c + 4h + {0, 1}, b1 = {2, 3}. at(i): element i of
// head r's row (shared memory, already times the softmax scale).
struct QueryFrag {
  uint32_t hi[kSteps][2], lo[kSteps][2];
};
template <class At>
__device__ __forceinline__ QueryFrag query_frag(At at, bool valid, int c) {
  QueryFrag f;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int e = 32 * (s / 2) + 8 * c + 4 * (s % 2);
    const float4 x = valid ? at(e) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    split2(x.x, x.y, f.hi[s][0], f.lo[s][0]);
    split2(x.z, x.w, f.hi[s][1], f.lo[s][1]);
  }
  return f;
}

// A lane's part of its two keys (16w + r, + 8): elements 32b + 8c .. + 7 of each block b, raw.
template <class Kv>
struct KeyFrag;
template <>
struct KeyFrag<const __half*> {
  uint4 k[2][kBlocks];
  // key i (0: row r, 1: row r + 8) from its row (element 0 of the head's row in the cache)
  __device__ __forceinline__ void load(int i, const __half* row, int c) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) k[i][b] = *reinterpret_cast<const uint4*>(row + 32 * b + 8 * c);
  }
  __device__ __forceinline__ void zero(int i) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) k[i][b] = make_uint4(0, 0, 0, 0);
  }
  // s[0..3] += (key r, head 2c), (key r, head 2c + 1), (key r + 8, head 2c), (key r + 8, head 2c + 1)
  // over the part's dims (the caller zeroes s before part 0).
  __device__ __forceinline__ void add_scores(const QueryFrag& q, float (&s)[4]) const {
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
      const int b = st / 2, h = st % 2;
      const uint32_t a[4] = {word(k[0][b], 2 * h), word(k[1][b], 2 * h), word(k[0][b], 2 * h + 1),
                             word(k[1][b], 2 * h + 1)};
      mma_f16(s, a, q.hi[st][0], q.hi[st][1]);
      mma_f16(s, a, q.lo[st][0], q.lo[st][1]);
    }
  }
};
template <>
struct KeyFrag<KvQ8> {
  uint2 k[2][kBlocks];
  uint2 d[2];  // the key's four block scales (f16), one 8-byte load
  __device__ __forceinline__ void load(int i, const KvQ8& row, int c) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) k[i][b] = *reinterpret_cast<const uint2*>(row.q + row.e + 32 * b + 8 * c);
    d[i] = row_scales(row);
  }
  __device__ __forceinline__ void zero(int i) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) k[i][b] = make_uint2(0, 0);
    d[i] = make_uint2(0, 0);
  }
  // As the f16 form, a block's two k-steps into their own accumulators, then times the keys' scales.
  __device__ __forceinline__ void add_scores(const QueryFrag& q, float (&s)[4]) const {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      float cb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t a[4];
        s8x4_f16(h ? k[0][b].y : k[0][b].x, a[0], a[2]);
        s8x4_f16(h ? k[1][b].y : k[1][b].x, a[1], a[3]);
        mma_f16(cb, a, q.hi[2 * b + h][0], q.hi[2 * b + h][1]);
        mma_f16(cb, a, q.lo[2 * b + h][0], q.lo[2 * b + h][1]);
      }
      const float d0 = block_scale(d[0], b), d1 = block_scale(d[1], b);
      s[0] += d0 * cb[0];
      s[1] += d0 * cb[1];
      s[2] += d1 * cb[2];
      s[3] += d1 * cb[3];
    }
  }
};

// A lane's part of the warp's values: keys 2c, 2c + 1, 2c + 8, 2c + 9 (slot u = 0..3 in that order)
// of its 16, the dims of the element map above, raw.
__device__ __forceinline__ int value_key(int u, int c) { return 2 * c + (u & 1) + 8 * (u >> 1); }
template <class Kv>
struct ValueFrag;
template <>
struct ValueFrag<const __half*> {
  uint4 v[4][2];  // dims 16r .. 16r + 15
  __device__ __forceinline__ void load(int u, const __half* row, int r) {
    v[u][0] = *reinterpret_cast<const uint4*>(row + 16 * r);
    v[u][1] = *reinterpret_cast<const uint4*>(row + 16 * r + 8);
  }
  __device__ __forceinline__ void zero(int u) { v[u][0] = v[u][1] = make_uint4(0, 0, 0, 0); }
  // o[t0 + T][0..3] += the tile's (dim 16r + 2T, head 2c), (same, 2c + 1), (dim + 1, 2c), (dim + 1,
  // 2c + 1) of the part; p[u]: 2^6 P of slot u's key for head r (zero past G or n). t0: the part's
  // first tile, a constant where the caller's part loop is unrolled.
  template <int N>
  __device__ __forceinline__ void pv(const float (&p)[4], float (&o)[N][4], int t0) const {
    uint32_t bh[2], bl[2];
    split2(p[0], p[1], bh[0], bl[0]);
    split2(p[2], p[3], bh[1], bl[1]);
#pragma unroll
    for (int T = 0; T < kTiles; ++T) {
      const uint32_t x0 = word(v[0][T / 4], T % 4), x1 = word(v[1][T / 4], T % 4);
      const uint32_t x2 = word(v[2][T / 4], T % 4), x3 = word(v[3][T / 4], T % 4);
      const uint32_t a[4] = {__byte_perm(x0, x1, 0x5410), __byte_perm(x0, x1, 0x7632), __byte_perm(x2, x3, 0x5410),
                             __byte_perm(x2, x3, 0x7632)};
      mma_f16(o[t0 + T], a, bh[0], bh[1]);
      mma_f16(o[t0 + T], a, bl[0], bl[1]);
    }
  }
};
template <>
struct ValueFrag<KvQ8> {
  uint32_t v[4][kBlocks];  // dims 32b + 4r .. + 3
  uint2 d[4];              // the key's four block scales
  __device__ __forceinline__ void load(int u, const KvQ8& row, int r) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) v[u][b] = *reinterpret_cast<const uint32_t*>(row.q + row.e + 32 * b + 4 * r);
    d[u] = row_scales(row);
  }
  __device__ __forceinline__ void zero(int u) {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) v[u][b] = 0;
    d[u] = make_uint2(0, 0);
  }
  template <int N>
  __device__ __forceinline__ void pv(const float (&p)[4], float (&o)[N][4], int t0) const {
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      float x[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) x[u] = block_scale(d[u], b) * p[u];
      uint32_t bh[2], bl[2];
      split2(x[0], x[1], bh[0], bl[0]);
      split2(x[2], x[3], bh[1], bl[1]);
      // t: bytes (key 2c, key 2c + 1) interleaved, dims 0, 1 then 2, 3 of the block's four
      const uint32_t t01 = __byte_perm(v[0][b], v[1][b], 0x5140), t23 = __byte_perm(v[0][b], v[1][b], 0x7362);
      const uint32_t u01 = __byte_perm(v[2][b], v[3][b], 0x5140), u23 = __byte_perm(v[2][b], v[3][b], 0x7362);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        uint32_t a[4];
        s8x4_f16(e ? t23 : t01, a[0], a[1]);
        s8x4_f16(e ? u23 : u01, a[2], a[3]);
        mma_f16(o[t0 + 2 * b + e], a, bh[0], bh[1]);
        mma_f16(o[t0 + 2 * b + e], a, bl[0], bl[1]);
      }
    }
  }
};

// Where element (head h, dim d) of the P V accumulators sits in a warp's fragments, as an index into
// a slot of kHeadTiles x 4 x 32 floats laid out [tile][register][lane] (conflict-free stores). Part
// d / kD's tiles follow part 0's.
template <class Kv>
__device__ __forceinline__ int frag_index(int h, int d) {
  const int part = d / kD;
  d %= kD;
  int T, r, half;
  if constexpr (std::is_same_v<Kv, KvQ8>) {
    T = 2 * (d / 32) + (d % 4) / 2, r = (d % 32) / 4, half = d % 2;
  } else {
    T = (d % 16) / 2, r = d / 16, half = d % 2;
  }
  T += kTiles * part;
  return (T * 4 + 2 * half + h % 2) * 32 + 4 * r + h / 2;
}

}  // namespace bw24::cuda::decode_mma
