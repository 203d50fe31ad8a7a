// The streamed one-token GEMV (sm_90): persistent CTAs, up to three per SM (four for F16 / BF16),
// each walking its share of the row groups (8 rows, a consumer warp each; dealt out in turn) in K
// chunks. Stage = the group's 8 row pieces of a chunk (per matrix: two for gate + up), every plane
// of a piece one bulk copy, into a ring of stages (as many as fit, see kMinStages) completed on
// mbarriers (cuda/common/bulk.cuh). A ninth warp only issues the copies: it refills a stage once
// all 8 consumer warps have arrived on its empty barrier, so no warp waits at a CTA barrier for
// another.
// Formats: Q4_K and Q5_K (file layout, one plane), Q6_K (planes cut by a tile per row piece,
// cuda/common/q6k_tiles.cuh: a piece is one copy) without gate-up, Q8_0 (planes, 8 blocks a
// "block"), and F16 / BF16 rows (store / add, f32 activations read through L1; gemv.cu hands them
// over, one matrix or Q, K and V as segments of one launch: gemv_multi). Other formats, several
// tokens and routed (MoE) launches stay on the warp-per-row kernels. Measured on the H200 (tg128,
// same build, A/B by environment; docs/performance.md):
//  - Q6_K one-matrix launches (attn_v, half the downs and lm_head of Q4_K_M): Qwen3-8B Q4_K_M
//    319.5 -> 328.2, a Q6_K model 260.1 -> 262.4 (17f4499). A row piece as one copy (its planes a
//    tile) instead of four: Qwen3-8B Q4_K_M 499.8 / 499.0 -> 517.9 / 516.3, Qwen3.5-9B 478.0 / 481.3
//    -> 504.8 / 504.4, the Q6_K model 340.5 -> 355.5 (c7bd59c, next129). Q6_K gate-up streamed
//    (two 13 KB pieces per row group: 86 KB a CTA with three stages, no room for a PDL successor)
//    took the Q6_K model to 246.7, and a chunk of 8 blocks (more, smaller stages) to 208.6 (a6231ee).
//  - Q8_0 streamed was slower than its warp-per-row kernel before the producer warp (Qwen3-8B Q8_0
//    262.3 against 287.7, 4d117d8) and even with it (290.4 -> 288.0, cf3ab7d). With three CTAs an
//    SM, the cursor and the bank-conflict-free reads of Q80Stream (next106 / next107, same binary,
//    two rounds): 330.3 / 329.8 -> 376.6 / 377.3 with pieces of 8 blocks, 398.6 / 400.4 with
//    pieces of 16 (34.8 KB stages, two CTAs an SM); without gate-up streamed 363.5 / 361.6.
//  - The producer warp (it was warp 0 doing both, with a __syncthreads per stage: ncu of the
//    gate-up launch had warps stalled at that barrier 45 % of their time, waiting for warp 0's
//    copy issue): Qwen3-8B Q4_K_M 333.1 -> 354.7, Q6_K 271.1 -> 273.3 (6880500 beside 4ad9eb2).
//  - Activations staged bank-conflict free (act_slot / swizzle of each format): Qwen3-8B Q4_K_M
//    327.3 -> 333.5, Q6_K 262.0 -> 269.8, Qwen3.5-9B Q4_K_M 319.8 -> 333.8, Qwen3-30B-A3B 297.8 ->
//    310.2 (f2c9767 against f698b82, built side by side in one session).
//  - F16 / BF16 rows with the producer warp: Qwen3-8B BF16 149.8 -> 159.2 (two rounds, cf3ab7d
//    beside 04deedd; without the producer warp they were slower, 128.9 against 149.5).
//  - Measured slower and dropped (branch wip/next, 70f2419, before the producer warp): routed (MoE)
//    launches on this kernel (Qwen3-30B-A3B 271.5 with them, 287.9 without: the experts' stages
//    can only be issued after the PDL wait), an L2 prefetch of a CTA's later row groups before the
//    PDL wait (293.9 with, 309.8 without). With the producer warp (cf3ab7d beside 04deedd, two
//    rounds): routed again 311.3 -> 305.6, Q8_0 290.4 -> 288.0, IQ4_XS 239.6 -> 227.4, Q6_K
//    gate-up 272.4 -> 251.1; all passed their kernel checks and stay on branch wip/next3.
//  - An even share of the (row group, K chunk) items per CTA, a row group cut between two CTAs
//    meeting in a scratch (round 11, 60a2de1 beside cd475a1): Qwen3-8B Q4_K_M 410.6 -> 370.1,
//    Qwen3.5-9B 398.4 -> 360.4, BF16 165.7 -> 161.9. The CTAs that finish after one row group
//    free their slots for the next kernel's early copies under PDL; evened out, none do.
//
// Why: the warp-per-row kernel issues a row's 2.3 KB (K = 4096) and then waits: its bytes in
// flight are capped by registers (60 per lane at 4 CTAs/SM), each CTA pays its activation staging
// before its first weight load, and 1.5-3 waves of short-lived CTAs leave tails (ncu: QKV 14.2 MB
// in 13.2 us = 1.1 TB/s, gate-up 56.6 MB in 34 us = 1.7 TB/s). Here 2 CTAs x 3 stages x 18-27 KB
// are in flight per SM (kernels-hopper.md §1.2 asks for >= 32 KB), the first stages are issued
// before the PDL wait (weights depend on nothing, so they overlap the previous kernel), and the
// work is split evenly (O: 512 groups on 264 CTAs). Measured (H200, f55bde0, Q4_K / Q5_K only):
// gate-up 26.8 us (2.1 TB/s), QKV 11.4 us, Qwen3-8B Q4_K_M tg128 278.8 -> 326.8 tok/s
// (docs/performance.md).
//
// Results differ from the warp-per-row kernel by float summation order only (Q4_K / Q5_K lanes sum
// 64 weights, not 32; Q6_K lanes sum the same 32, so its outputs are bit-equal): bw24-kernel-check
// gemv_q8_streamed compares the two (normalized error < 1e-6).
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"
#include "cuda/gemv/q8_common.cuh"

namespace bw24::cuda::gemv_detail {
namespace {

// Three CTAs per SM where their shared memory fits (launch() sizes the grid by the fit): with one,
// the warps could not hide their own load-to-use chains (H200, Qwen3-8B Q4_K_M tg128: 237.9 tok/s
// with one, 325.8 with two, f55bde0); three became possible once the producer warp cut the
// registers (72 at most under these launch bounds, no spills): 352.5 / 354.7 -> 381.6, Q6_K 271.6
// -> 274.0 (06b48e5 beside 04deedd). A Q4_K CTA (3 stages of 18.4 KB, gate-up or not, plus the
// staged activations: 61-71 KB for K = 4096-12288) fits three times; Q6_K's (3 x 26.9 KB) twice,
// hence its small gain; Q8_0's with pieces of 16 blocks (3 x 34.8 KB) twice.
constexpr int kCtasPerSm = 3;
// F16 / BF16 (f32 activations read through L1, 3 stages of 16 KB; 45-48 registers, 56 once the
// activations are loaded ahead of the wait, the cap at four) fit four an SM, and need them: their
// warps wait on L1 loads (ncu, a BF16 down projection at three an SM: achieved occupancy 36 % of
// 56 %, 9.7 of 16.7 cycles between a warp's instructions on L1). H200, Qwen3-8B BF16 tg128
// (883aad4, two rounds): 182.5 / 182.1 at three -> 204.9 / 203.2 at four.
constexpr int kHalfCtasPerSm = 4;
template <class F>
constexpr int ctas_per_sm() { return F::kF32Act ? kHalfCtasPerSm : kCtasPerSm; }
// Ring stages: as many as fit beside the activations in a quarter of an SM's shared memory (227 KB
// for CTAs, 1 KB of it per CTA the driver's): three CTAs of this kernel and one CTA of the next,
// which under PDL issues its own first stages while these drain; at least kMinStages. That is 3
// stages for the Qwen3 shapes. Measured with two CTAs per SM (H200, Qwen3-8B Q4_K_M tg128,
// 4d117d8): 3 stages 326.6, 5 stages (two
// CTAs fit, the successor does not) 285.7, 8 stages (one CTA per SM) 236.7: the overlap of a
// GEMV's first copies with its predecessor is worth more than deeper rings. The copy engine is
// not the limit: cp.async.bulk alone streams 4.4-4.5 TB/s in this configuration, copies of 1.1 KB
// included (bw24-microbench bulk_stream), so the ~2.1 TB/s of gate-up is the consumers' time.
constexpr int kMinStages = 3, kMaxStages = 8;
constexpr int64_t kSmemPerSm = 227 * 1024, kSmemReservedPerCta = 1024;
constexpr int kRingHeader = 128;  // the stages' mbarriers (full, then empty), ahead of the ring
static_assert(kRingHeader >= 2 * kMaxStages * 8, "two mbarriers per stage");

// The activations a format's load_act reads: int8 rows and their (d, d sum q) pairs staged in
// shared memory (the int8 formats), or the f32 row in global memory (F16 / BF16: read through L1,
// as 4 bytes a weight would not fit beside the ring).
struct StagedAct {
  const int8_t* q;
  const float2* ds;
  const float* f;
};

// ---------------------------------------------------------------------------------------------
// Formats. Each gives: kF32Act (activations as f32, StagedAct::f); kGateUp (whether a gate-up launch
// takes it: the kernel's gate-up instance exists only then); kBlockElems; kChunk (blocks per
// row piece for one matrix); kLanes (lanes per block: a warp step covers 32 / kLanes blocks);
// kPlanes and plane_bytes(p) (bytes per block
// of each plane, in plane order; a piece holds plane p at kChunk x the bytes of the planes before
// it); kPlaneAlign (blocks per row must be a multiple of it for the small planes' copies to stay
// 16-byte multiples); Act + load_act (the lane's activations of block b, from shared memory staged
// with act_slot: where int4 i of the activation row is put); dot (the lane's part of
// block bb of a piece).
// ---------------------------------------------------------------------------------------------

// Q4_K / Q5_K: lane c of a block's four takes the sub-block pair 2c, 2c + 1: the 32 quant bytes
// qs[32c, 32c + 32) (64 weights), so the scale / min decode and the float epilogue are paid once
// per 64 weights (ncu of a version with 32 weights per lane: 4.2 instructions per weight against
// the budget of ~2, kernels-hopper.md §1.3).
// kChunkBlocks: blocks per row piece, 16, or 24 for rows longer than kLongRowBlocks (store and add
// launches only, see there). A lane walks blocks slot_b + 8 u of its row either way, in the same
// order, so both sum the same terms in the same order: the same bits.
template <bool kFifth, int kChunkBlocks = 16>
struct KQuantStream {
  static constexpr bool kF32Act = false, kTiles = false, kGateUp = kChunkBlocks == 16;
  static constexpr int kBlockElems = 256, kChunk = kChunkBlocks, kLanes = 4, kPlanes = 1, kPlaneAlign = 1;
  __host__ __device__ static constexpr int plane_bytes(int) { return kFifth ? 176 : 144; }
  static constexpr int kQs = kFifth ? 48 : 16;
  struct Act {
    int4 lo[2], hi[2];  // columns 64c + [0, 32) (sub-block 2c) and 64c + 32 + [0, 32) (2c + 1)
    float4 ds;          // (d, d sum q) of sub-blocks 2c and 2c + 1
  };
  // Lane c of block b reads the 64 bytes at 256 b + 64 c: in one 8-lane phase of a 16-byte load
  // (blocks b, b + 1, c = 0..3) the four lanes with c even all start on banks 0-3 and the odd ones
  // on 16-19, a 4-way conflict (b adds 256 bytes, 0 mod 128). Staged with the 16-byte pieces of
  // each lane's 64 bytes permuted by f = c / 2 + 2 (b mod 2) (piece j at j ^ f), the 8 lanes of a
  // phase read 8 different 16-byte bank groups.
  __device__ static int swizzle(int64_t b, int c) { return (c >> 1) | (static_cast<int>(b & 1) << 1); }
  __device__ static int64_t act_slot(int64_t i) {  // i = 16 b + 4 c + j
    return (i & ~int64_t{3}) | ((i & 3) ^ swizzle(i >> 4, static_cast<int>(i >> 2) & 3));
  }
  __device__ static Act load_act(const StagedAct& x, int64_t b, int c) {
    const int4* q = reinterpret_cast<const int4*>(x.q + b * 256 + 64 * c);
    const int f = swizzle(b, c);
    return {{q[0 ^ f], q[1 ^ f]}, {q[2 ^ f], q[3 ^ f]}, reinterpret_cast<const float4*>(x.ds)[b * 4 + c]};
  }
  template <int kCh>
  __device__ static float dot(const uint8_t* piece, int bb, const Act& a, int c) {
    constexpr int kLo = 0x0F0F0F0F, kBit = 0x01010101;
    const uint8_t* blk = piece + bb * plane_bytes(0);
    const uint4 head = *reinterpret_cast<const uint4*>(blk);
    const uint4* qs = reinterpret_cast<const uint4*>(blk + kQs + 32 * c);
    const uint4 q0 = qs[0], q1 = qs[1];
    const int q[8] = {int(q0.x), int(q0.y), int(q0.z), int(q0.w), int(q1.x), int(q1.y), int(q1.z), int(q1.w)};
    // Q4_K's high nibbles stay in place (byte & 0xF0 = 16 x the nibble) and the sum is shifted once:
    // one instruction a register instead of a shift and a mask (Q5_K puts its fifth bit above them).
    // H200, tg128 `-p 16 -r 3`, alternated (next171): Qwen3-8B Q4_K_M 536.3 / 535.9 -> 537.8 / 538.5,
    // Qwen3.5-9B 522.1 / 521.6 -> 525.0 / 527.6, Qwen3-30B-A3B 509.4 / 509.5 -> 512.0 / 511.7.
    constexpr int kHi = static_cast<int>(0xF0F0F0F0u);
    int lo[8], hi[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      lo[k] = q[k] & kLo;
      hi[k] = kFifth ? (q[k] >> 4) & kLo : q[k] & kHi;
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
    // The in-place sum is 16 x the nibbles' exactly (|sum| < 2^20), so the shift gives the same integer.
    int s2;
    if constexpr (kFifth)
      s2 = dp4a4(hi[4], hi[5], hi[6], hi[7], a.hi[1], dp4a4(hi[0], hi[1], hi[2], hi[3], a.hi[0], 0));
    else
      s2 = dp4a4_us(hi[4], hi[5], hi[6], hi[7], a.hi[1], dp4a4_us(hi[0], hi[1], hi[2], hi[3], a.hi[0], 0)) >> 4;
    int sc[2], mn[2];
    scale_min_k4_pair(c, head.y, head.z, head.w, sc, mn);
    const float d = half_lo(head.x), dmin = half_hi(head.x);
    return d * (static_cast<float>(sc[0]) * a.ds.x * static_cast<float>(s1) +
                static_cast<float>(sc[1]) * a.ds.z * static_cast<float>(s2)) -
           dmin * (static_cast<float>(mn[0]) * a.ds.y + static_cast<float>(mn[1]) * a.ds.w);
  }
};

// Q6_K, planes ql[128] | qh[64] | scales[16] (int8) | d (f16), the lane split of gemv_q8.cu's
// Q6_K: lane (n, l0) of a block's 8 takes half n and l in [l0, l0 + 8) (32 weights: elements
// 128n + 32j + l, j = 0..3, scale 8n + 2j + l0 / 16); w = d sc (q - 32).
template <int kChunkBlocks>
struct Q6KStream {
  static constexpr bool kF32Act = false, kTiles = true;  // planes cut by tiles (cuda/common/q6k_tiles.cuh)
  static constexpr bool kGateUp = false;                 // not streamed (stream_format)
  static constexpr int kBlockElems = 256, kChunk = kChunkBlocks, kLanes = 8, kPlanes = 4, kPlaneAlign = 8;
  __host__ __device__ static constexpr int plane_bytes(int p) { return p == 0 ? 128 : p == 1 ? 64 : p == 2 ? 16 : 2; }
  struct Act {
    int2 x[4];  // columns 128n + 32j + l0 + [0, 8)
    float d[4];  // the scale of block-of-32 4n + j
  };
  // Lane (n, l0) of block b reads 8 bytes at 256 b + 128 n + 32 j + l0 for j = 0..3: in one
  // 16-lane phase of an 8-byte load (blocks b, b + 1) the lanes of one l0 all land on the same
  // banks (4-way). Staged with the 32-byte rows j of each half n at j ^ f, f = n + 2 (b mod 2),
  // the 16 lanes read 16 different 8-byte bank pairs.
  __device__ static int swizzle(int64_t b, int n) { return n | (static_cast<int>(b & 1) << 1); }
  __device__ static int64_t act_slot(int64_t i) {  // int4 i = 16 b + 8 n + 2 j + h
    const int j = static_cast<int>(i >> 1) & 3, f = swizzle(i >> 4, static_cast<int>(i >> 3) & 1);
    return (i & ~int64_t{7}) | ((j ^ f) << 1) | (i & 1);
  }
  __device__ static Act load_act(const StagedAct& x, int64_t b, int sub) {
    const int n = sub / 4, l0 = 8 * (sub % 4), f = swizzle(b, n);
    Act a;
    const float4* ds = reinterpret_cast<const float4*>(x.ds + b * 8 + 4 * n);  // 4 (d, d sum q) pairs
    const float4 d01 = ds[0], d23 = ds[1];
    a.d[0] = d01.x;
    a.d[1] = d01.z;
    a.d[2] = d23.x;
    a.d[3] = d23.z;
#pragma unroll
    for (int j = 0; j < 4; ++j) a.x[j] = *reinterpret_cast<const int2*>(x.q + b * 256 + 128 * n + 32 * (j ^ f) + l0);
    return a;
  }
  template <int kCh>
  __device__ static float dot(const uint8_t* piece, int bb, const Act& a, int sub) {
    const int n = sub / 4, l0 = 8 * (sub % 4);
    const uint8_t* ql = piece + bb * 128 + 64 * n + l0;
    const uint2 av2 = *reinterpret_cast<const uint2*>(ql), bv2 = *reinterpret_cast<const uint2*>(ql + 32);
    const uint2 hv2 = *reinterpret_cast<const uint2*>(piece + kCh * 128 + bb * 64 + 32 * n + l0);
    // Scales 8n + l0 / 16 + {0, 2, 4, 6} out of one 8-byte load of the block's half n.
    const uint2 sc2 = *reinterpret_cast<const uint2*>(piece + kCh * 192 + bb * 16 + 8 * n);
    const int sh = 8 * (l0 / 16);
    const float d = half_at(piece + kCh * 208 + bb * 2);
    const float s[4] = {d * static_cast<float>(static_cast<int8_t>(sc2.x >> sh)),
                        d * static_cast<float>(static_cast<int8_t>(sc2.x >> (16 + sh))),
                        d * static_cast<float>(static_cast<int8_t>(sc2.y >> sh)),
                        d * static_cast<float>(static_cast<int8_t>(sc2.y >> (16 + sh)))};
    int q[4][2];
    q6k_unpack<true>(av2, bv2, hv2, q);
    return q6k_lane_dot<true>(q, s, a.x, a.d);
  }
};

// Q8_0, planes qs[32] | d (f16), taken 8 blocks at a time: a "block" here is 256 weights (plane 0:
// 8 x 32 quant bytes, plane 1: 8 x 2 bytes of d; lib/quant/repack.h's planes read 8 blocks at a
// time). Lane c of a block's four takes Q8_0 blocks 2c and 2c + 1 (64 weights; the (d, d sum q)
// pairs of Q4_K / Q5_K's lane). The stage holds the quants as copied, 256 bytes a block, so lane c
// reading its 16-byte piece k would put lanes c and c + 2 of blocks bb and bb + 1 on the same banks
// (4-way). Lane c reads piece k ^ f instead (f = Q4_K's swizzle), of the quants and of the
// activations, which are staged as they are (act_slot: none): the 8 lanes of a phase read 8
// different 16-byte bank groups. Pieces 0-1 of the lane's 64 bytes are block 2c, 2-3 block 2c + 1,
// so load k (piece k ^ f) is in block 2c + (k / 2 ^ b % 2).
template <int kChunkBlocks>
struct Q80Stream {
  static constexpr bool kF32Act = false, kTiles = false, kGateUp = true;
  static constexpr int kBlockElems = 256, kChunk = kChunkBlocks, kLanes = 4, kPlanes = 2, kPlaneAlign = 1;
  __host__ __device__ static constexpr int plane_bytes(int p) { return p == 0 ? 256 : 16; }
  using Act = KQuantStream<false>::Act;  // lo: loads 0-1, hi: loads 2-3
  __device__ static int64_t act_slot(int64_t i) { return i; }
  // Q4_K's load: slot k ^ f, which holds piece k ^ f here (Q4_K's staging put piece k there).
  __device__ static Act load_act(const StagedAct& x, int64_t b, int c) {
    return KQuantStream<false>::load_act(x, b, c);
  }
  template <int kCh>
  __device__ static float dot(const uint8_t* piece, int bb, const Act& a, int c) {
    const int f = KQuantStream<false>::swizzle(bb, c);
    const uint4* qs = reinterpret_cast<const uint4*>(piece + bb * 256 + 64 * c);
    const uint4 w0 = qs[0 ^ f], w1 = qs[1 ^ f], w2 = qs[2 ^ f], w3 = qs[3 ^ f];
    const int s01 = dp4a4(int(w1.x), int(w1.y), int(w1.z), int(w1.w), a.lo[1],
                          dp4a4(int(w0.x), int(w0.y), int(w0.z), int(w0.w), a.lo[0], 0));
    const int s23 = dp4a4(int(w3.x), int(w3.y), int(w3.z), int(w3.w), a.hi[1],
                          dp4a4(int(w2.x), int(w2.y), int(w2.z), int(w2.w), a.hi[0], 0));
    // d of blocks 2c and 2c + 1 (4 bytes); loads 0-1 are block 2c + b % 2, loads 2-3 the other.
    const uint32_t d2 = *reinterpret_cast<const uint32_t*>(piece + kCh * 256 + bb * 16 + 4 * c);
    const float d_lo = half_lo(d2), d_hi = half_hi(d2);
    const bool odd = bb & 1;
    const float da = odd ? d_hi : d_lo, db = odd ? d_lo : d_hi;
    const float xa = odd ? a.ds.z : a.ds.x, xb = odd ? a.ds.x : a.ds.z;
    return da * xa * static_cast<float>(s01) + db * xb * static_cast<float>(s23);
  }
};

// F16 / BF16 rows (f32 activations): a "block" is 256 weights (512 bytes), lane l of the warp takes
// its 16 bytes (8 weights, columns 8 l + [0, 8)), as gemv.cu's version 2 does, with the same sum
// order inside a 16-byte piece.
template <bool kBf16>
struct HalfStream {
  static constexpr bool kF32Act = true, kTiles = false;  // nothing staged
  static constexpr bool kGateUp = false;                 // the float family has no gate-up epilogue
  static constexpr int kBlockElems = 256, kChunk = 4, kLanes = 32, kPlanes = 1, kPlaneAlign = 1;
  __host__ __device__ static constexpr int plane_bytes(int) { return 512; }
  __device__ static int64_t act_slot(int64_t i) { return i; }
  struct Act {
    float4 lo, hi;  // columns 8 l + [0, 4) and + [4, 8)
  };
  __device__ static Act load_act(const StagedAct& x, int64_t b, int l) {
    const float4* p = reinterpret_cast<const float4*>(x.f + b * 256 + 8 * l);
    return {__ldg(p), __ldg(p + 1)};
  }
  template <int kCh>
  __device__ static float dot(const uint8_t* piece, int bb, const Act& a, int l) {
    const uint4 v = *reinterpret_cast<const uint4*>(piece + bb * 512 + 16 * l);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
    float w[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (kBf16) {
        w[2 * k] = __uint_as_float(u[k] << 16);
        w[2 * k + 1] = __uint_as_float(u[k] & 0xFFFF0000u);
      } else {
        w[2 * k] = __half2float(__ushort_as_half(static_cast<unsigned short>(u[k] & 0xFFFFu)));
        w[2 * k + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(u[k] >> 16)));
      }
    }
    return (w[0] * a.lo.x + w[1] * a.lo.y + w[2] * a.lo.z + w[3] * a.lo.w) +
           (w[4] * a.hi.x + w[5] * a.hi.y + w[6] * a.hi.z + w[7] * a.hi.w);
  }
};

// ---------------------------------------------------------------------------------------------
// The kernel.
// ---------------------------------------------------------------------------------------------
// The kWarpsPerCta consumer warps alone (named barrier 1; the producer warp never arrives there).
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory"); }
enum class StreamCut : int { kAny, kWhole, kOne };
struct StreamArgs {
  Segments seg;
  const uint8_t* w2;
  int64_t cols;
  ActQ8 x;
  const float* xf;  // F16 / BF16: the f32 input row
  int act;
  unsigned group_end[kMaxGemvSegments];  // row groups of segments 0..s (cumulative)
  unsigned groups;
  int stages;  // ring stages (kMinStages..kMaxStages)
  // How the launch's items are cut (launch_format), which picks the kernel instance (launch) whose
  // producer and consumers take the cut as constants (the kernel's item lambda): kOne, one segment of
  // whole row groups (rows % 8 == 0) and whole pieces (blocks % kChunk == 0), every item 8 rows x
  // kChunk blocks of segment 0; kWhole, several segments of whole groups and pieces (the segment by
  // compares, the rest constant); kAny, the rest.
  StreamCut cut;
  GemvChain chain;  // the launch's place in the PDL chain (gemv.cuh)
  // The gate-up's output also as the down projection's int8 input (the kQ8 instance): blocks of 32
  // rows, rmsnorm_q8's bits without a norm. CTA b then takes the `per` row groups from b per (a
  // multiple of four: whole blocks), not b, b + grid, ...
  int8_t* q_out;
  float2* ds_out;
  unsigned per;
  NormOut nout;  // the kFoldNormOut instance's outputs (gemv_q8_add_normed)
};

// The folds a kernel instance makes (template flags; each instance holds only its own code, see the
// kernel's comment on instances):
//  kFoldQ8      the gate-up's output also as the down's int8 input (q_out, ds_out; runs of four groups);
//  kFoldNormIn  the input is a folded norm's (ActQ8::norm_parts): each output times 1 / rms, the
//               partial sums staged beside the activations;
//  kFoldNormOut an add launch's output also as the next norm's folded input (nout; runs of two groups,
//               clusters of two CTAs, one block of 32 rows a cluster).
// The two norm folds take 71 of a Qwen3-8B step's 73 normed rmsnorm_q8 launches away. H200, tg128 `-p 512`,
// alternated (next353): Qwen3-8B Q4_K_M 612.7 / 611.8 -> 626.5 / 625.7, Qwen3.5-9B 589.2 -> 591.1 (its FFN norms only).
// Not the +9 % the norms' ablation promised: the launches after a fold grow (traced, next354: the gate-up
// 14.2 -> 16.4 us, DRAM-bound, had copied its first stages during the norm's window; Q + K 3.6 -> 5.5, its CTAs
// start only as the down's exit). Producers at two ring stages, so a consumer CTA fits beside them: 597 (next355).
constexpr int kFoldQ8 = 1, kFoldNormIn = 2, kFoldNormOut = 4;
// A folded instance holds one of stage_q8_rows' two forms (either stages any width), the host choosing by width:
// kShortAct the one-pass form (cols / 16 <= kStreamThreads: every kNormIn launch, whose n_parts = cols / 16 is
// bounded so), kLongAct the six-ahead one. SASS bytes of Qwen3-8B's folded launches (cuobjdump): Q + K 31,744 ->
// 25,984, V 33,408 -> 27,008, the gate-up 35,200 -> 29,440, the O projection 31,872 -> 27,392, the downs 34,304 ->
// 31,232 (Q6_K) and 33,792 -> 30,720 (Q4_K); each ~5-6 KB above its plain instance before (round 65). H200, tg128,
// one binary with the two forms behind a switch, alternated (next377, next382): Qwen3-8B Q4_K_M 637.5 / 636.8 / 636.5
// -> 645.7 / 644.4 / 645.4 tok/s (+1.3 %), at depth 4096 542.1 / 541.3 -> 549.1 / 549.8 (Qwen3.5-9B 597.0 -> 599.5,
// Qwen3-30B-A3B 715.3 -> 718.0 with the plain instances lean too, BW24_LEAN=2). The code a CTA walks from a cold
// instruction cache, again (round 69).
constexpr int kShortAct = 8, kLongAct = 16;
// Shared memory behind the staged activations: kFoldNormIn's partial sums (at most kStreamThreads, one a
// thread's load), or kFoldNormOut's mbarrier and three rows of 16 floats.
constexpr int64_t kFoldOutBytes = 8 + 3 * 16 * 4;

template <class F, int kMats>
struct StreamShape {
  static constexpr int kChunk = F::kChunk / kMats;  // blocks per row piece
  __host__ __device__ static constexpr int block_bytes() {
    int n = 0;
    for (int p = 0; p < F::kPlanes; ++p) n += F::plane_bytes(p);
    return n;
  }
  __host__ __device__ static constexpr int plane_offset(int p) {  // of plane p in a piece
    int n = 0;
    for (int q = 0; q < p; ++q) n += kChunk * F::plane_bytes(q);
    return n;
  }
  static constexpr int kPiece = kChunk * block_bytes();        // bytes per row piece
  static constexpr int kStage = kMats * kWarpsPerCta * kPiece;  // bytes per stage
};
// Shared memory for the staged input row (F16 / BF16 read theirs from global: none).
template <class F>
__host__ __device__ constexpr int64_t stream_act_bytes(int64_t cols) { return F::kF32Act ? 0 : cols + cols / 32 * 8; }

// A CTA: the kWarpsPerCta consumer warps (a row of the group each) and one producer warp that only
// issues copies. Stage s has two barriers: full[s] (the copies landed) and empty[s] (every consumer
// warp has read it); no CTA-wide barrier after the activations are staged, so a warp that is done
// with a stage goes on to the next one already landed.
constexpr int kStreamThreads = kThreads + 32, kProducer = kWarpsPerCta;

// A kernel instance per cut (StreamArgs::cut, chosen on the host): each holds one copy of the
// producer's and the consumers' loops. Until round 30 one kernel held all three copies and switched on
// a.cut; one copy a kernel measured (H200, tg128 `-p 16 -r 3`, same binary, A/B by environment,
// next175): Qwen3-8B Q4_K_M 536.5 / 539.2 -> 558.1 / 557.6, Qwen3.5-9B 523.2 / 523.3 -> 537.4 / 538.0,
// Qwen3-30B-A3B 512.4 / 510.9 -> 533.5 / 533.1, no stack either way: a likely reading (not profiled)
// is the instruction cache, the three copies of a ~250-instruction item loop, and the next kernel's
// code beside them under PDL, against one. The F16 / BF16 instances (56 registers at four CTAs an SM)
// had also spilled with several copies (stack 0 -> 8 -> 16 bytes, 7811dcf / a46a5c0): Qwen3-8B BF16
// tg128 220.2 / 220.1 -> 216.2 / 216.8 (next172, 01be39b beside dba9642); one copy, 222.5 / 223.7
// beside round 22's d93bff5 at 221.6 / 222.3 (next173), kOne and kAny without stack, kWhole 8 bytes.
template <class F, GemvOut kOut, StreamCut kCut, int kFold = 0>
__global__ void __launch_bounds__(kStreamThreads, ctas_per_sm<F>()) gemv_stream_kernel(StreamArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kQ8 = (kFold & kFoldQ8) != 0, kNormIn = (kFold & kFoldNormIn) != 0,
                 kNormOut = (kFold & kFoldNormOut) != 0;
  static_assert(!kNormOut || (kOut == GemvOut::kAdd && kCut == StreamCut::kOne), "the norm's rows: an add of whole groups");
  constexpr bool kRuns = kQ8 || kNormOut;  // a CTA's groups one run (a.per of them), not dealt in turn
  constexpr int kMats = kOut == GemvOut::kGateUp ? 2 : 1;
  using Shape = StreamShape<F, kMats>;
  constexpr int kChunk = Shape::kChunk, kPiece = Shape::kPiece, kStage = Shape::kStage;
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint8_t* ring = smem + kRingHeader;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t blocks = a.cols / F::kBlockElems;
  const int chunks = static_cast<int>((blocks + kChunk - 1) / kChunk);
  // CTA b takes row groups b, b + grid, b + 2 grid, ... (grid <= groups, see launch_format). The CTAs
  // an SM holds at once are b, b + n_sm, ... (the block scheduler deals a launch's CTAs out over the
  // SMs in order); with a contiguous run each (groups / grid, rounded either way) they all rounded
  // the same way where grid / n_sm divides evenly: F16 / BF16 Q, K, V of Qwen3-8B, 768 groups on 528
  // CTAs, put 8 groups on one SM and 4 on the next (5.8 on average); dealt out in turn, 6 and 5.
  // Measured (H200, tg128, same binary, A/B by environment): Qwen3-8B BF16 222.6 -> 223.7, Q4_K_M
  // 465.0 -> 468.5 (218a5bd).
  // kQ8: the CTA's run of `per` groups from g_first, one after the other.
  const unsigned g_step = kRuns ? 1u : gridDim.x, g_first = kRuns ? blockIdx.x * a.per : blockIdx.x;
  const int items = kRuns ? static_cast<int>(min(a.per, a.groups - g_first)) * chunks
                        : static_cast<int>((a.groups - blockIdx.x + g_step - 1) / g_step) * chunks;
  // Item i: row group g = b + (i / chunks) grid (segment s, rows [r0, r0 + nr)), K chunk kc = i % chunks,
  // in ring slot i % stages with barrier phase (i / stages) % 2. Producer and consumers walk the
  // items with a Cursor, which steps those four without a division: a 32-bit division is ~20
  // dependent instructions on the GPU, and the consumers' loop did two an item, ahead of the
  // addresses of their loads (BF16 store instance: 286 -> 240 instructions in that loop). Measured
  // (H200, tg128, next105, two rounds): Qwen3-8B BF16 220.8 -> 222.6, Q4_K_M 456.0 -> 465.0.
  struct Cursor {
    unsigned g;
    int kc, slot;
    uint32_t phase;
    __device__ void next(int n_chunks, int n_stages, unsigned g_step) {
      if (++kc == n_chunks) kc = 0, g += g_step;
      if (++slot == n_stages) slot = 0, phase ^= 1u;
    }
  };
  struct Item {
    int s, nr, kc, nb;
    int64_t r0, rows;
  };
  // The item of cursor c under cut kCut: kOne needs no selects or bounds, kWhole no bounds.
  auto item = [&](const Cursor& c) {
    Item it;
    const unsigned g = c.g;
    it.kc = c.kc;
    if constexpr (kCut == StreamCut::kOne) {
      it.s = 0, it.rows = a.seg.rows[0], it.r0 = int64_t{g} * kWarpsPerCta, it.nr = kWarpsPerCta, it.nb = kChunk;
      return it;
    }
    it.s = segment_of(a.group_end, a.seg.n, g);
    const unsigned first = segment_start(a.group_end, it.s);
    it.rows = segment_pick(a.seg.rows, it.s);
    it.r0 = int64_t{g - first} * kWarpsPerCta;
    if constexpr (kCut == StreamCut::kWhole) {
      it.nr = kWarpsPerCta, it.nb = kChunk;
      return it;
    }
    it.nr = static_cast<int>(min(int64_t{kWarpsPerCta}, it.rows - it.r0));
    it.nb = static_cast<int>(min(int64_t{kChunk}, blocks - int64_t{it.kc} * kChunk));
    return it;
  };
  // The producer warp: item i's row pieces into its stage, one bulk copy per (matrix, row, plane), spread
  // over the lanes after lane 0 has announced the stage's bytes.
  auto issue = [&](const Cursor& c, uint64_t policy) {
    const Item it = item(c);
    const int slot = c.slot;
    if (lane == 0) {
      uint32_t bytes = 0;
      for (int p = 0; p < F::kPlanes; ++p) bytes += static_cast<uint32_t>(it.nb * F::plane_bytes(p));
      mbar_arrive_expect_tx(&full[slot], static_cast<uint32_t>(kMats * it.nr) * bytes);
    }
    __syncwarp();
    const uint8_t* w0 = segment_pick(a.seg.w, it.s);
    const int64_t n_blocks = it.rows * blocks;
    // Q6_K's planes are cut by tiles (cuda/common/q6k_tiles.cuh): where a tile is the row piece, the
    // piece (its four planes, as the stage holds them) is one copy, not four.
    const Q6KTiles tiles(n_blocks, blocks);
    if (F::kTiles && tiles.stride == kChunk && it.nb == kChunk) {
      for (int k = lane; k < kMats * it.nr; k += 32) {
        const int r = k % it.nr, m = k / it.nr;
        const int64_t gb = (it.r0 + r) * blocks + int64_t{it.kc} * kChunk;
        bulk_copy_g2s(ring + slot * kStage + (m * kWarpsPerCta + r) * kPiece, (m == 0 ? w0 : a.w2) + tiles.base(gb),
                      static_cast<uint32_t>(kPiece), &full[slot], policy);
      }
      return;
    }
    for (int k = lane; k < kMats * it.nr * F::kPlanes; k += 32) {
      const int p = k % F::kPlanes, r = (k / F::kPlanes) % it.nr, m = k / (F::kPlanes * it.nr);
      const int64_t gb = (it.r0 + r) * blocks + int64_t{it.kc} * kChunk;
      // Plane p of block gb: after the planes before it, of the tensor (or of gb's tile)
      int64_t src = F::kTiles ? tiles.base(gb) : 0, per_plane = F::kTiles ? tiles.stride : n_blocks;
      for (int q = 0; q < p; ++q) src += per_plane * F::plane_bytes(q);
      src += (F::kTiles ? tiles.local(gb) : gb) * F::plane_bytes(p);
      bulk_copy_g2s(ring + slot * kStage + (m * kWarpsPerCta + r) * kPiece + Shape::plane_offset(p),
                    (m == 0 ? w0 : a.w2) + src, static_cast<uint32_t>(it.nb * F::plane_bytes(p)), &full[slot], policy);
    }
  };
  // The folds' shared memory, behind the staged activations (below; the int8 formats only): kNormIn's
  // partial sums, or kNormOut's mbarrier (the partner's 16 values landed) and three rows of 16 floats:
  // this CTA's rows of y, the partner's values of y w, the norm's weight at this CTA's rows. (Pointers
  // made only where used: computed ahead for every instance they moved ptxas' registers in the others.)
  [[maybe_unused]] auto fold_smem = [&]() {
    return reinterpret_cast<float*>(ring + a.stages * kStage + a.cols + a.cols / 32 * 8);
  };
  [[maybe_unused]] auto fold_bar = [&]() { return reinterpret_cast<uint64_t*>(fold_smem()); };
  [[maybe_unused]] auto fold_rows = [&]() { return fold_smem() + 2; };
  uint64_t policy = 0;
  Cursor pc{g_first, 0, 0, 0u};  // the producer's
  if (warp == kProducer) {
    policy = l2_evict_first_policy();
    if (lane == 0) {
      for (int s = 0; s < a.stages; ++s) {
        mbar_init(&full[s], 1);
        mbar_init(&empty[s], kWarpsPerCta);
      }
      if constexpr (kNormOut) mbar_init(fold_bar(), 1);
      mbar_init_fence();
      if constexpr (kNormOut) mbar_arrive_expect_tx(fold_bar(), 16 * 4);
    }
    __syncwarp();
    for (int i = 0; i < min(items, a.stages); ++i, pc.next(chunks, a.stages, g_step))
      issue(pc, policy);
    if constexpr (kNormOut) {  // the norm's weight (no kernel writes it) at rows 16 b .. 16 b + 15, before the wait
      if (lane < 16) {
        const float w = __ldg(a.nout.w + 16 * int64_t{blockIdx.x} + lane);
        fold_rows()[32 + lane] = a.nout.one_plus ? 1.0f + w : w;
      }
    }
  }
  if (a.chain == GemvChain::kPlain) {
    pdl_begin();
  } else if (a.chain == GemvChain::kWaitFirst) {
    pdl_wait();
    pdl_trigger();
  } else {
    pdl_trigger();  // kIndependent: the input was complete before this launch started
  }
  // The activations into shared memory behind the ring (every warp reads all of them; none for
  // the f32 activations of F16 / BF16), in one L2 round trip (stage_q8_rows); a folded norm's partial
  // sums loaded before them, so in the same round trip.
  int4* act = reinterpret_cast<int4*>(ring + a.stages * kStage);
  const int64_t q16 = F::kF32Act ? 0 : a.cols / 16;
  float2* act_ds = reinterpret_cast<float2*>(act + q16);
  [[maybe_unused]] float part = 0.0f;
  if constexpr (kNormIn)
    if (threadIdx.x < a.x.n_parts) part = __ldg(a.x.norm_parts + threadIdx.x);
  // Six ahead only where the rows take more than one pass (the K = 12,288 downs: three -> one round
  // trip); where they fit one (every Qwen3-30B-A3B launch, the K = 4096 ones) the plain loop, whose
  // kernel measured 526.9 / 528.0 tok/s on Qwen3-30B-A3B against 512.6 / 517.6 with six ahead for
  // every launch (next123).
  const auto slot_of = [](int64_t i) { return F::act_slot(i); };
  // A folded instance holds only the form its launches take (kShortAct, kLongAct): each ~300 instructions.
  constexpr bool kShortOnly = (kFold & kShortAct) != 0, kLongOnly = (kFold & kLongAct) != 0;
  if (kShortOnly || (!kLongOnly && q16 <= kStreamThreads))
    stage_q8_rows<kStreamThreads, 1>(act, act_ds, a.x.q, a.x.ds, q16, slot_of);
  else
    stage_q8_rows<kStreamThreads, 6>(act, act_ds, a.x.q, a.x.ds, q16, slot_of);
  if constexpr (kNormIn)
    if (threadIdx.x < a.x.n_parts) fold_smem()[threadIdx.x] = part;
  __syncthreads();  // the activations, and the barriers' initialisation, seen by every warp
  // kNormOut: both CTAs of the cluster have started (and initialised fold_bar) before either writes into
  // the other's shared memory; the wait comes at the end, long satisfied by then.
  if constexpr (kNormOut) cluster_arrive_relaxed();
  if (warp == kProducer) {  // refill stage i % stages once the consumers released item i - stages
    for (int i = a.stages; i < items; ++i, pc.next(chunks, a.stages, g_step)) {
      mbar_wait(&empty[pc.slot], pc.phase ^ 1u);  // released: phase (i - stages) / stages
      issue(pc, policy);
    }
    if (a.chain == GemvChain::kIndependent) pdl_wait();  // this CTA completes after the predecessor
    if constexpr (kNormOut) cluster_wait();
    return;
  }
  // kNormIn: 1 / rms of the folded norm from the staged partial sums (each warp alike, lane-strided then
  // warp_sum's tree: the same bits in every warp and CTA), once a warp, for its rows' epilogues. Each row's
  // epilogue computed it until round 64 (8 shared loads, a shuffle tree and a root a row: ~150-200 cycles on
  // every item of a K = 4096 launch, one piece a row): H200, tg128 `-p 512`, alternated (next367), Qwen3-8B
  // Q4_K_M 629.1 / 630.5 -> 638.9 / 640.2, at depth 4096 533.3 -> 539.7, Qwen3.5-9B 594.2 -> 599.2.
  [[maybe_unused]] float norm_inv = 1.0f;
  if constexpr (kNormIn) {
    static_assert(kShortOnly, "a folded input's n_parts = cols / 16 <= kStreamThreads: one-pass staging");
    float ss = 0.0f;  // parts lane, lane + 32, ...: the nine a lane can have, unrolled without remainder code
#pragma unroll
    for (int k = 0; k < (kStreamThreads + 31) / 32; ++k)
      if (lane + 32 * k < a.x.n_parts) ss += fold_smem()[lane + 32 * k];
    ss = warp_sum(ss);
    norm_inv = rsqrtf(ss / static_cast<float>(a.cols) + a.x.norm_eps);
  }
  constexpr int kBlocksPerStep = 32 / F::kLanes;
  const int slot_b = lane / F::kLanes, sub = lane % F::kLanes;
  const StagedAct x{reinterpret_cast<const int8_t*>(act), act_ds, a.xf};
  float acc[kMats] = {};
  constexpr int kSteps = (kChunk + kBlocksPerStep - 1) / kBlocksPerStep;
  // F16 / BF16 load their f32 activations (L1 hits, the piece's columns) before the stage's wait, so
  // that latency runs beside the wait and the previous piece's sums rather than after them (ncu: 9.7
  // of 16.7 cycles between a warp's instructions waited on those loads). H200, Qwen3-8B tg128: BF16
  // 205.0 / 204.4 -> 218.0 / 218.4, F16 203.8 / 203.4 -> 217.5 / 216.0 (155b7c3, next102). The int8
  // formats read theirs from shared memory after the wait: ahead they lost (Qwen3-30B-A3B -1.4 %
  // with Q4_K / Q5_K ahead, Qwen3-8B Q6_K -1.4 % with Q6_K ahead; next103, next104).
  constexpr int kAhead = F::kF32Act ? kSteps : 0;
  typename F::Act ahead[kAhead > 0 ? kAhead : 1];
  // The consumers' loop, under the kernel's cut as the producer's issue above. Same sums in the same
  // order under every cut: the same bits (kernel check gemv_q8_streamed). kOne (one segment: every
  // Qwen3 launch but Q + K) takes the item's segment choice and bounds as constants (~40 of the Q4_K
  // store instance's ~295 instructions an item, SASS; ~255 without). H200, tg128 (next158 -> next159):
  // consumers alone, Qwen3-8B Q4_K_M 527.2 / 526.8 -> 530.5 / 530.7, Qwen3.5-9B 511.3 / 509.2 ->
  // 515.1 / 516.1; the producer's issue too, 530.7 / 532.7 -> 538.1 / 536.8 and 514.0 / 514.8 ->
  // 521.3 / 522.0 (its refill of a released stage starts that much sooner). kWhole (Q + K, a
  // delta-net layer's four inputs, F16 / BF16 Q + K + V) takes its bounds as constants: Qwen3.5-9B
  // Q4_K_M 518.5 / 518.2 -> 520.6 / 522.6, Qwen3-8B BF16 212.8 / 212.9 -> 216.2 / 216.2, Qwen3-8B /
  // 30B Q4_K_M within noise (next164, next166).
  // A lambda called once: as a plain block, ptxas chose other registers in 27 of the 72 instances
  // (cuobjdump), not the code measured in next175.
  auto consume = [&]() {
    Cursor cc{g_first, 0, 0, 0u};
    for (int i = 0; i < items; ++i, cc.next(chunks, a.stages, g_step)) {
      const Item it = item(cc);
      const int slot = cc.slot;
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int bb = slot_b + kBlocksPerStep * u;
        if (bb < it.nb) ahead[u] = F::load_act(x, int64_t{it.kc} * kChunk + bb, sub);
      }
      // An add launch's old output (the residual, written kernels ago) of a row this item completes,
      // read before the stage's wait: its L2 round trip runs beside the wait and the sums instead of
      // after them (the last items' epilogues end the launch, and the next kernel waits for that).
      // The int8 formats only: F16 / BF16 read it after the sums (Qwen3-8B BF16 with the early read:
      // 223.4 -> 217.7 tok/s, next116).
      constexpr bool kEarlyResidual = kOut == GemvOut::kAdd && !F::kF32Act;
      [[maybe_unused]] float y_old = 0.0f;  // read only by kEarlyResidual instances
      if constexpr (kEarlyResidual)
        if (it.kc == chunks - 1 && lane == 0 && warp < it.nr)
          y_old = segment_pick(a.seg.y, it.s)[it.r0 + warp];
      mbar_wait(&full[slot], cc.phase);
      if (warp < it.nr) {
        const uint8_t* stage = ring + slot * kStage + warp * kPiece;
#pragma unroll
        for (int u = 0; u < kSteps; ++u) {
          const int bb = slot_b + kBlocksPerStep * u;
          if (bb < it.nb) {
            typename F::Act xa;
            if constexpr (kAhead > 0) xa = ahead[u];
            else xa = F::load_act(x, int64_t{it.kc} * kChunk + bb, sub);
#pragma unroll
            for (int m = 0; m < kMats; ++m)
              acc[m] += F::template dot<kChunk>(stage + m * kWarpsPerCta * kPiece, bb, xa, sub);
          }
        }
        if (it.kc == chunks - 1) {  // the row is complete: the epilogue of the warp-per-row kernel
          float* y = segment_pick(a.seg.y, it.s);
          const int64_t row = it.r0 + warp;
          if constexpr (kOut == GemvOut::kGateUp) {
            float g = warp_sum(acc[0]), u = warp_sum(acc[1]);
            if constexpr (kNormIn) {
              g *= norm_inv, u *= norm_inv;
            }
            const float v = gate_activation(g, a.act) * u;
            if (lane == 0) y[row] = v;
            if constexpr (kQ8) {
              // Rows 32 b .. 32 b + 31 are groups 4 b .. 4 b + 3 (one warp a row): each warp leaves its row's value
              // in block b's slots (two blocks' slots in turn: a warp refills a block's slots only after the next
              // block's barrier, which warp 0 reaches after reading them), and once the block's last group is done
              // the eight consumer warps meet and warp 0 quantizes it as rmsnorm_q8 would (store_act_q8). The
              // int8 launch between the gate-up and the down (48 CTAs, 2.5-3.0 us of segment a Qwen3-8B layer)
              // goes; the barrier and the quantization sit on the CTA's tail, ~0.2 us. H200, tg128 `-p 512`,
              // alternated (next349): Qwen3-8B Q4_K_M 600.7 / 601.9 / 600.4 -> 615.6 / 615.7 / 615.1, Qwen3.5-9B
              // 581.2 -> 592.9, Qwen3-8B at depth 4096 514.9 -> 529.1. The same fold on round 18's kernel (next95, at
              // 454 tok/s) had measured +0.4 %, inside the noise; the step has changed around it since.
              __shared__ float block_rows[2][32];
              const unsigned blk = cc.g / 4;
              if (lane == 0) block_rows[blk & 1][(cc.g % 4) * kWarpsPerCta + warp] = v;
              if (cc.g % 4 == 3) {
                consumers_sync();
                if (warp == 0) store_act_q8(block_rows[blk & 1][lane], a.q_out + 32 * int64_t{blk} + lane, a.ds_out + blk);
              }
            }
          } else {
            float v = warp_sum(acc[0]);
            if constexpr (kNormIn) v *= norm_inv;
            if constexpr (kNormOut) {
              // The CTA's run is groups 2 b, 2 b + 1: rows 16 b .. 16 b + 15, half of block b / 2 (its partner
              // CTA b ^ 1, the other CTA of the cluster, holds the other half). Each warp leaves its row's new value
              // in fold_rows(); after the second group the eight consumer warps meet and warp 0 writes the block:
              // the sum of squares of its 16 rows, its 16 values of y w into the partner's rows 16..31 (st.async on the
              // partner's fold_bar), and once the partner's have landed, the block's scale and its own 16 codes, as
              // rmsnorm_q8's store_act_q8 (both CTAs round the same 32 values: the same scale and codes).
              const float y_new = (kEarlyResidual ? y_old : y[row]) + v;
              if (lane == 0) {
                y[row] = y_new;
                fold_rows()[(cc.g & 1u) * kWarpsPerCta + warp] = y_new;
              }
              if (cc.g & 1u) {
                consumers_sync();
                cluster_wait();  // the partner's arrival after its staging
                if (warp == 0) {
                  const unsigned rank = blockIdx.x & 1u;  // clusters of two along x: the CTA's rank in its cluster
                  float* rows = fold_rows();  // [0, 16): this CTA's y; [16, 32): the partner's y w; [32, 48): w
                  const float o = lane < 16 ? rows[lane] : 0.0f;
                  const float own = o * rows[32 + (lane & 15)];
                  // Sent first: the sum of squares and the own half's shuffle run while the partner's values
                  // are on their way (they followed the sum until round 64; H200 tg128, alternated, next373:
                  // Qwen3-8B 639.8 / 640.5 / 638.7 -> 640.5 / 641.4 / 641.1, at depth 4096 542.5 -> 544.6).
                  if (lane < 16) st_async_cluster(&rows[16 + lane], own, fold_bar(), rank ^ 1u);
                  const float ss = warp_sum(o * o);
                  if (lane == 0) a.nout.parts[blockIdx.x] = ss;
                  const bool mine = (static_cast<unsigned>(lane) >> 4) == rank;  // element lane of the block
                  const float mine_v = __shfl_sync(0xffffffffu, own, lane & 15);
                  mbar_wait_cluster(fold_bar(), 0);
                  const float x = mine ? mine_v : rows[16 + (lane & 15)];
                  float id;
                  const float d = act_q8_scale(warp_max_abs(x), &id);
                  const int qi = __float2int_rn(x * id);
                  const int sum = __reduce_add_sync(0xffffffffu, qi);
                  const int64_t blk = blockIdx.x >> 1;
                  if (mine) a.nout.q[32 * blk + lane] = static_cast<int8_t>(qi);
                  if (rank == 0 && lane == 0) a.nout.ds[blk] = make_float2(d, d * static_cast<float>(sum));
                }
              }
            } else {
              if (lane == 0) y[row] = kOut == GemvOut::kAdd ? (kEarlyResidual ? y_old : y[row]) + v : v;
            }
          }
#pragma unroll
          for (int m = 0; m < kMats; ++m) acc[m] = 0.0f;
        }
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[slot]);  // this warp is done with the stage
    }
  };
  consume();
#endif
}

// The successor's room (gemv_q8's room): the most CTAs of this launch an SM holds beside one CTA of
// the successor, by shared memory and by registers; where that is fewer than fit alone but at
// least two (one would halve the grid's slots: not measured), *smem rises to the fewest bytes at
// which one more no longer fits the SM. The SM's shared memory is the device's per-SM figure (228
// KB on the H200), not kSmemPerSm: padded by 227 KB, three O projection CTAs of the 30B still fit
// (3 x 77,483 B of 233,472) and the router gained nothing (next326 / next327).
std::atomic<int64_t> g_room_smem{0}, g_room_regs{0}, g_room_ctas{0}, g_room_raised{0};  // gemv_stream_last_room
template <auto kKernel>
cudaError_t make_room(size_t* smem, const CtaRoom& next) {
  CtaRoom own;
  BW24_CUDA_TRY(cta_room<kKernel>(kStreamThreads, *smem, &own));
  const SmLimits sm = sm_limits();
  const int64_t fixed = own.smem - static_cast<int64_t>(*smem);  // static shared memory, the driver's 1 KB
  const int64_t fit = std::min(sm.smem / own.smem, sm.regs / own.regs);
  const int64_t cap = std::min((sm.smem - next.smem) / own.smem, (sm.regs - next.regs) / own.regs);
  if (cap < 2 || cap >= fit) return cudaSuccess;
  const int64_t padded = sm.smem / (cap + 1) + 1 - fixed;
  if (cap * (padded + fixed) + next.smem > sm.smem) return cudaSuccess;
  *smem = static_cast<size_t>(padded);
  g_room_smem.store(padded + fixed, std::memory_order_relaxed);
  g_room_regs.store(own.regs, std::memory_order_relaxed);
  g_room_ctas.store(cap, std::memory_order_relaxed);
  g_room_raised.fetch_add(1, std::memory_order_relaxed);
  return cudaSuccess;
}

// The CTAs of F a launch of smem bytes a CTA may hold at once: ctas_per_sm<F>() of them per SM where
// their shared memory fits (Q6_K's stages may not).
template <class F>
unsigned stream_slots(size_t smem) {
  const int fit = static_cast<int>(kSmemPerSm / (static_cast<int64_t>(smem) + kSmemReservedPerCta));
  return static_cast<unsigned>(std::min(ctas_per_sm<F>(), fit) * sm_count());
}

// Whether dealing `groups` row groups in runs of whole blocks (four groups) keeps as many CTAs as the
// plain deal (the int8 formats' grid below) on `slots`: the gate-up's kQ8 instance is taken only there.
// Where it would take fewer, each CTA walks more groups one after the other: the MoE shared expert of
// Qwen3.6-35B-A3B (64 groups: 16 CTAs instead of 64) measured 603.0 -> 583.7 tok/s (next352).
constexpr bool quad_deal_keeps_grid(unsigned groups, unsigned slots) {
  const unsigned per = (groups + slots - 1) / slots, per_q = 4 * ((groups / 4 + slots - 1) / slots);
  return (groups + per_q - 1) / per_q >= (groups + per - 1) / per;
}
// H200 (132 SMs, three gate-up CTAs an SM): Qwen3-8B / Qwen3.5-9B (12,288 rows: 1,536 groups) keep 384 CTAs;
// Llama-3-8B (14,336), Qwen3-14B (17,408) and Qwen3-0.6B (3,072) would not, and keep the plain deal.
static_assert(quad_deal_keeps_grid(1536, 396) && !quad_deal_keeps_grid(1792, 396) &&
              !quad_deal_keeps_grid(2176, 396) && !quad_deal_keeps_grid(384, 396) && !quad_deal_keeps_grid(64, 396));

template <class F, GemvOut kOut, StreamCut kCut, int kFold = 0>
cudaError_t launch_cut(StreamArgs a, size_t smem, const CtaRoom& room, cudaStream_t s) {
  constexpr auto kernel = gemv_stream_kernel<F, kOut, kCut, kFold>;
  constexpr bool kQ8 = (kFold & kFoldQ8) != 0;
  if (room.smem > 0 || room.regs > 0) BW24_CUDA_TRY(make_room<kernel>(&smem, room));
  const unsigned slots = stream_slots<F>(smem);
  // The int8 formats take as few CTAs as keep the most row groups a CTA takes (512 groups on 396
  // slots: 256 CTAs of two, not 116 of two and 280 of one), so the slots left free hold the
  // successor's CTAs from the start (H200, 7ef0d1a beside this, two rounds: Qwen3.5-9B Q4_K_M tg128
  // 398.8 -> 407.4, Qwen3-8B Q4_K_M 409.6 -> 411.9). F16 / BF16 keep every slot: their consumers read
  // the f32 activations through L1 and need every CTA's warps (the even grid there, at three an
  // SM: Qwen3-8B BF16 165 -> 158.5).
  // kQ8: runs of whole blocks (four groups), as few CTAs as keep the most blocks a CTA takes.
  // kFoldNormOut: runs of two (norm_out_keeps_grid: the plain deal's), in clusters of two CTAs.
  const unsigned per = kQ8                        ? 4 * ((a.groups / 4 + slots - 1) / slots)
                       : (kFold & kFoldNormOut) ? 2u
                                                : (a.groups + slots - 1) / slots;
  const unsigned grid = F::kF32Act ? std::min(a.groups, slots) : (a.groups + per - 1) / per;
  a.per = per;
  // The shared-memory opt-in is a property of the kernel on each device (allow_smem keeps a bit a
  // device): a process-wide flag had left a second GPU's launches at the 48 KB default.
  BW24_CUDA_TRY((allow_smem<kernel>(200 * 1024)));
  return launch_pdl_cluster(kernel, dim3(grid), dim3(kStreamThreads), (kFold & kFoldNormOut) ? 2u : 1u, smem, s, a);
}

// The plain (unfolded) kernel instance of a's cut; the folded instances are launched by cut in launch_format.
template <class F, GemvOut kOut>
cudaError_t launch(const StreamArgs& a, size_t smem, const CtaRoom& room, cudaStream_t s) {
  switch (a.cut) {
    case StreamCut::kOne: return launch_cut<F, kOut, StreamCut::kOne>(a, smem, room, s);
    case StreamCut::kWhole: return launch_cut<F, kOut, StreamCut::kWhole>(a, smem, room, s);
    default: return launch_cut<F, kOut, StreamCut::kAny>(a, smem, room, s);
  }
}

// The formats with folded-norm instances (kFoldNormIn, kFoldNormOut): those of the Q4_K_M / Q5_K_M models'
// dense layers. Inputs: Q4_K / Q5_K pieces of 16 blocks (the norms' widths), Q6_K pieces of 16 (attn_v);
// outputs: the O projections (16 blocks) and the downs (Q4_K / Q5_K pieces of 24, Q6_K of 16).
template <class F>
constexpr bool kFoldIn = false;
template <bool kFifth>
constexpr bool kFoldIn<KQuantStream<kFifth, 16>> = true;
template <>
constexpr bool kFoldIn<Q6KStream<16>> = true;
template <class F>
constexpr bool kFoldOut = kFoldIn<F>;
template <bool kFifth>
constexpr bool kFoldOut<KQuantStream<kFifth, 24>> = true;

// Whether a norm-out launch keeps the plain deal's grid: every CTA two groups there (the plain per), whole
// blocks of 32 rows in pairs of CTAs (groups % 4 == 0), and the partial sums within one staging load a
// thread of the consumer (rows / 16 <= kStreamThreads). Qwen3-8B's O projection (512 groups on 396 slots)
// and downs (512 on 264): 256 CTAs either way.
constexpr bool norm_out_keeps_grid(unsigned groups, unsigned slots) {
  return groups % 4 == 0 && (groups + slots - 1) / slots == 2 && groups * 8 / 16 <= kStreamThreads;
}
static_assert(norm_out_keeps_grid(512, 396) && norm_out_keeps_grid(512, 264) && !norm_out_keeps_grid(256, 396) &&
              !norm_out_keeps_grid(1024, 396));

// The formats with a gate-up instance that writes its int8 output too (kQ8): Q4_K and Q5_K, the
// gate-ups of the Q4_K_M / Q5_K_M models (gemv_stream refuses the others before the dispatch).
template <class F>
constexpr bool kGateUpQ8 = false;
template <bool kFifth>
constexpr bool kGateUpQ8<KQuantStream<kFifth, 16>> = true;

// The format's entry: whether it can take the shape, then the launch by epilogue.
template <class F>
cudaError_t launch_format(StreamArgs a, GemvOut out, cudaStream_t s, bool* taken, const CtaRoom& room = {}) {
  const int64_t blocks = a.cols / F::kBlockElems;
  if (a.cols % F::kBlockElems != 0 || blocks % F::kPlaneAlign != 0) return cudaSuccess;
  const int64_t stage = out == GemvOut::kGateUp ? StreamShape<F, 2>::kStage : StreamShape<F, 1>::kStage;
  const int64_t chunk = out == GemvOut::kGateUp ? StreamShape<F, 2>::kChunk : StreamShape<F, 1>::kChunk;
  bool whole = blocks % chunk == 0;
  for (int i = 0; i < a.seg.n; ++i) whole = whole && a.seg.rows[i] % kWarpsPerCta == 0;
  a.cut = !whole ? StreamCut::kAny : a.seg.n == 1 ? StreamCut::kOne : StreamCut::kWhole;
  const bool norm_in = a.x.norm_parts != nullptr, norm_out = a.nout.q != nullptr;
  if (norm_in && (a.x.n_parts < 1 || a.x.n_parts > kStreamThreads)) return cudaSuccess;
  const int64_t fixed = kRingHeader + stream_act_bytes<F>(a.cols) +
                        (norm_in ? int64_t{a.x.n_parts} * 4 : 0) + (norm_out ? kFoldOutBytes : 0);
  const int64_t resident = ctas_per_sm<F>() + 1;  // and the successor's first CTA
  const int64_t budget = kSmemPerSm / resident - kSmemReservedPerCta - fixed;
  a.stages = static_cast<int>(std::clamp<int64_t>(budget / stage, kMinStages, kMaxStages));
  const int64_t smem = fixed + a.stages * stage;
  if (smem > 200 * 1024) return cudaSuccess;
  const auto sz = static_cast<size_t>(smem);
  const bool q8_out = a.q_out && out == GemvOut::kGateUp && a.cut == StreamCut::kOne && a.seg.rows[0] % 32 == 0 &&
                      (quad_deal_keeps_grid(a.groups, stream_slots<F>(sz)) || gemv_q8_gate_up_q8_always());
  if (norm_out) {  // an add with the next norm's folded input: one segment of whole groups and pieces, else not taken
    if constexpr (kFoldOut<F>) {
      constexpr auto kernel = gemv_stream_kernel<F, GemvOut::kAdd, StreamCut::kOne, kFoldNormOut>;
      if (out == GemvOut::kAdd && !norm_in && a.cut == StreamCut::kOne && room.smem == 0 && room.regs == 0 &&
          norm_out_keeps_grid(a.groups, stream_slots<F>(sz))) {
        BW24_CUDA_TRY((allow_smem<kernel>(200 * 1024)));
        if (cluster_fits<kernel>(dim3(kStreamThreads), 2, sz)) {
          *taken = true;
          return a.cols / 16 <= kStreamThreads
                     ? launch_cut<F, GemvOut::kAdd, StreamCut::kOne, kFoldNormOut | kShortAct>(a, sz, room, s)
                     : launch_cut<F, GemvOut::kAdd, StreamCut::kOne, kFoldNormOut | kLongAct>(a, sz, room, s);
        }
      }
    }
    return cudaSuccess;
  }
  if (norm_in) {  // a folded norm's input: stores of whole groups and pieces, gate-ups with or without q_out
    if constexpr (kFoldIn<F>) {
      // n_parts = cols / 16 <= kStreamThreads (above): the one-pass staging form (kShortAct)
      if (out == GemvOut::kStore && a.cut != StreamCut::kAny) {
        *taken = true;
        return a.cut == StreamCut::kOne
                   ? launch_cut<F, GemvOut::kStore, StreamCut::kOne, kFoldNormIn | kShortAct>(a, sz, room, s)
                   : launch_cut<F, GemvOut::kStore, StreamCut::kWhole, kFoldNormIn | kShortAct>(a, sz, room, s);
      }
      if constexpr (F::kGateUp) {
        if (out == GemvOut::kGateUp && a.cut == StreamCut::kOne && (q8_out || !a.q_out)) {
          *taken = true;
          return q8_out ? launch_cut<F, GemvOut::kGateUp, StreamCut::kOne, kFoldQ8 | kFoldNormIn | kShortAct>(a, sz, room, s)
                        : launch_cut<F, GemvOut::kGateUp, StreamCut::kOne, kFoldNormIn | kShortAct>(a, sz, room, s);
        }
      }
    }
    return cudaSuccess;
  }
  if (a.q_out) {  // the gate-up with its int8 output: one segment of whole blocks and pieces, else not taken
    if constexpr (kGateUpQ8<F>) {
      if (q8_out) {
        *taken = true;
        return launch_cut<F, GemvOut::kGateUp, StreamCut::kOne, kFoldQ8>(a, sz, room, s);
      }
    }
    return cudaSuccess;
  }
  *taken = true;
  switch (out) {
    case GemvOut::kStore: return launch<F, GemvOut::kStore>(a, sz, room, s);
    case GemvOut::kAdd: return launch<F, GemvOut::kAdd>(a, sz, room, s);
    case GemvOut::kGateUp:  // asked only of formats that stream it (stream_format, launch_kquant; the float family never)
      if constexpr (F::kGateUp) return launch<F, GemvOut::kGateUp>(a, sz, room, s);
      break;
  }
  *taken = false;
  return cudaErrorInvalidValue;
}

// A launch's arguments with its segments' row groups counted (8 rows each).
StreamArgs stream_args(const Segments& seg, const uint8_t* w2, int64_t cols, ActQ8 x, const float* xf, int act) {
  StreamArgs a{seg, w2, cols, x, xf, act, {}, 0, kMinStages, StreamCut::kAny, GemvChain::kPlain, nullptr, nullptr, 0, {}};
  for (int i = 0; i < seg.n; ++i) {
    a.groups += static_cast<unsigned>((seg.rows[i] + kWarpsPerCta - 1) / kWarpsPerCta);
    a.group_end[i] = a.groups;
  }
  return a;
}

}  // namespace

// Q6_K rows of at most this many 256-weight blocks (K <= 2048: the hidden width of Qwen3-30B-A3B
// and Qwen3.6-35B-A3B, their attn_v and lm_head) take pieces of 8 blocks, not 16. A 16-block piece
// of such a row is half empty, so half of each 26.9 KB stage sits idle and two CTAs fit an SM; with
// 13.4 KB stages three do. H200, tg128 (next96 / next97): Qwen3-30B-A3B 491.7 / 491.4 -> 496.2 /
// 495.9, Qwen3.6-35B-A3B 437.1 -> 445.0. Not for longer rows: 8-block pieces on 4096-wide rows lost
// 12.7 % (Qwen3-8B Q4_K_M 457 -> 399, twice the stages for the same bytes). Not for Q4_K / Q5_K
// short rows either (the 30B's Q, K, V): 491.6 -> 487.7, 35B 437.1 -> 419.4 (next97). Q8_0 takes
// the same rule (Qwen3-0.6B Q8_0, K = 1024 and 3072: 1485.8 with pieces of 8 everywhere, 1393.7 with
// 16 everywhere; Qwen3-8B Q8_0: 377 with 8, 399.5 with 16; next107).
constexpr int kShortRowBlocks = 8;
// Q4_K / Q5_K rows of more than this many blocks (the K = 12,288 downs of Qwen3-8B and Qwen3.5-9B,
// 17,408 of Qwen3.5-27B) take pieces of 24 blocks, not 16: a K = 12,288 down CTA walks 2 row groups x
// 2 pieces instead of 2 x 3. Why: in the decode graph a Qwen3-8B Q4_K down (28.3 MB) took 10.1 us,
// as long as a Q6_K down of 41.3 MB (10.7-11.2 us; next149's trace), both 6 items of 32K weights a
// CTA: the items more than the bytes set its time (ncu, next151: 300 instructions an item, 37 % of
// issue slots busy). Fewer items took ~0.6 us off a launch, not the ~2.6 predicted: the work per
// weight stays. 27.6 KB stages: two CTAs an SM, as Q6_K's 26.9 KB. H200, tg128 `-p 16 -r 3`
// against 16-block pieces (next153 / next154, alternated): Qwen3-8B Q4_K_M 515.6 / 519.7 / 520.0 / 520.4
// -> 523.8 / 520.4 / 522.6 / 521.9 (+0.6 %), Qwen3.5-9B 507.9 / 507.0 -> 513.4 / 511.5 (+0.9 %),
// Qwen3.5-27B 145.8 -> 148.1 (+1.6 %; 68 blocks: 3 pieces a row, not 5). Outputs unchanged (kernel
// check: the 4096 x 12288 Q4_K store / add rows differ from the warp-per-row kernel's in the same
// 3539 / 3469 outputs by the same 2.49e-7 / 2.47e-7 as with 16-block pieces, next143).
constexpr int kLongRowBlocks = 32;
// Q4_K (kFifth false) / Q5_K: 24-block pieces where the rule above applies, else 16.
template <bool kFifth>
cudaError_t launch_kquant(const StreamArgs& a, GemvOut out, cudaStream_t s, bool* taken, const CtaRoom& room) {
  using Long = KQuantStream<kFifth, 24>;
  return a.cols / Long::kBlockElems > kLongRowBlocks && out != GemvOut::kGateUp
             ? launch_format<Long>(a, out, s, taken, room)
             : launch_format<KQuantStream<kFifth>>(a, out, s, taken, room);
}

// The dispatch table of the streamed family: one entry per format.
// The int8 formats the streamed kernel takes (Q6_K one matrix only: its gate-up streamed made a Q6_K
// model slower, see the file comment; Q8_0 gate-up streamed is faster, 363 -> 377 at pieces of 8);
// gemv_stream's switch and gemv_q8_streams both ask it.
bool stream_format(uint32_t type, GemvOut out) {
  return type == kQ4_K || type == kQ5_K || (type == kQ6_K && out != GemvOut::kGateUp) || type == kQ8_0;
}

// Q4_K / Q5_K / Q6_K launches have folded-input instances (kFoldIn: pieces of 16 blocks, a gate-up's 8 a matrix):
// stores and gate-ups (not Q6_K's) of whole row groups and pieces (kOne or kWhole; launch_format's cut).
bool stream_takes_folded(uint32_t type, GemvOut out, int64_t rows, int64_t cols) {
  const bool format = type == kQ4_K || type == kQ5_K || (type == kQ6_K && out == GemvOut::kStore);
  const int64_t chunk = out == GemvOut::kGateUp ? 8 : 16;
  return format && out != GemvOut::kAdd && rows > 0 && rows % kWarpsPerCta == 0 && cols % 256 == 0 &&
         cols / 256 % chunk == 0 && cols / 256 <= kLongRowBlocks;
}

cudaError_t gemv_stream(const Segments& seg, const uint8_t* w2, uint32_t type, int64_t cols, ActQ8 x, GemvOut out,
                        int act, cudaStream_t s, bool* taken, GemvChain chain, const CtaRoom& room, int8_t* q_out,
                        float2* ds_out, const NormOut* norm_out) {
  *taken = false;
  bool aligned = out != GemvOut::kGateUp || reinterpret_cast<uintptr_t>(w2) % 16 == 0;
  for (int i = 0; i < seg.n; ++i) aligned = aligned && reinterpret_cast<uintptr_t>(seg.w[i]) % 16 == 0;
  if (!aligned || cols % 32 != 0 || !stream_format(type, out)) return cudaSuccess;
  StreamArgs a = stream_args(seg, w2, cols, x, nullptr, act);
  a.chain = chain;
  a.q_out = q_out, a.ds_out = ds_out;  // launch_format takes it only where the kQ8 instance exists (kGateUpQ8)
  if (norm_out) a.nout = *norm_out;     // and this where the kFoldNormOut one does (kFoldOut)
  switch (type) {
    case kQ4_K: return launch_kquant<false>(a, out, s, taken, room);
    case kQ5_K: return launch_kquant<true>(a, out, s, taken, room);
    case kQ6_K: return cols / Q6KStream<16>::kBlockElems <= kShortRowBlocks
                           ? launch_format<Q6KStream<8>>(a, out, s, taken, room)
                           : launch_format<Q6KStream<16>>(a, out, s, taken, room);
    case kQ8_0: return cols / Q80Stream<16>::kBlockElems <= kShortRowBlocks
                           ? launch_format<Q80Stream<8>>(a, out, s, taken, room)
                           : launch_format<Q80Stream<16>>(a, out, s, taken, room);
    default: return cudaSuccess;
  }
}

// F16 / BF16, one token, store or add (the float family has no gate-up epilogue).
cudaError_t gemv_stream_float(const Segments& seg, uint32_t type, int64_t cols, const float* x, GemvOut out,
                              cudaStream_t s, bool* taken) {
  *taken = false;
  bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0;
  for (int i = 0; i < seg.n; ++i) aligned = aligned && seg.rows[i] > 0 && reinterpret_cast<uintptr_t>(seg.w[i]) % 16 == 0;
  if (out == GemvOut::kGateUp || !aligned) return cudaSuccess;
  const StreamArgs a = stream_args(seg, nullptr, cols, ActQ8{}, x, 0);
  switch (type) {
    case kF16: return launch_format<HalfStream<false>>(a, out, s, taken);
    case kBF16: return launch_format<HalfStream<true>>(a, out, s, taken);
    default: return cudaSuccess;
  }
}

}  // namespace bw24::cuda::gemv_detail

namespace bw24::cuda {

bool gemv_q8_streams(uint32_t type, GemvOut out) {
  return gemv_q8_streamed() && pdl_supported() && gemv_detail::stream_format(type, out);
}

GemvRoomRecord gemv_stream_last_room() {
  using namespace gemv_detail;
  return {{g_room_smem.load(std::memory_order_relaxed), g_room_regs.load(std::memory_order_relaxed)},
          g_room_ctas.load(std::memory_order_relaxed), g_room_raised.load(std::memory_order_relaxed)};
}

}  // namespace bw24::cuda
