// Split-K decode attention (cuda/attention/flash.cuh, flash_decode).
//
// split_kernel, a CTA of 8 warps per (KV head g, head group hg, split s, token t), keys [lo, hi] of
// the split (at most 128), query heads h0 .. h0 + G - 1 (G: the group's; head groups below):
//  0. fused_rope (one token; qk_rope_store's work, its code): warp i < G normalizes and rotates
//     query head h0 + i from the raw QKV product into shared memory; the split that holds the
//     position writes the token's key and value head g into the cache and reads them back below.
// f16 and q8_0 caches at D = 128 and 256 (every head count) compute phases 1 and 3 on tensor cores
// instead (decode_mma.cuh: warp w takes keys 16w .. 16w + 15 in both, its values loaded before the
// softmax; D = 256 in two parts of 128 dims, part 1's values after it; red then holds the warps'
// accumulator fragments, pv_total below). Round 24: Qwen3-8B Q4_K_M tg128 at
// depth 4096 with a q8_0 cache 425 -> 452 tok/s, f16 438 -> 448, Qwen3-30B-A3B 402 -> 450 (next134/135).
// Round 27, D = 256: Qwen3.5-9B Q4_K_M tg128 at depth 4096 485.1 -> 492.2 (f16), 481.8 -> 490.9 (q8_0);
// at depth 0 unchanged (505.3 / 505.4 -> 506.2 / 505.4): there the kernel is a latency chain, 11.5 us
// against 12.4-12.8 before (CUPTI trace, next149), not its products (next148).
// The other caches and head sizes:
//  1. scores: two threads per key, each half a row: D / 16 independent 16-byte loads per thread
//     in flight, dot products against the group's G query rows (shared memory, broadcast reads),
//     one shuffle to add the halves. One read of K serves the G heads of the group.
//  2. per head: max, exp, sum over the split (a warp per head).
//  3. P V: warp w takes keys w, w + 8, w + 16, ... (interleaved, so that 16 keys are one round of
//     loads of 2 keys per warp, not two rounds of 8 on warp 0), lanes the row (D / 32 elements);
//     each lane issues the loads of 8 keys before using any; G x D / 32 accumulators per lane,
//     summed across the warps in a fixed order through shared memory in two barriers.
//  4. the merge, for up to kInlineMergeSplits visible splits by the CTA that finishes last among
//     the splits of (g, t): a counter per (g, t) in the scratch, taken after the CTA's partials
//     are fenced; the last CTA reads all partials back from L2 and writes O = sum_s e^(m_s - M)
//     O_s / sum_s e^(m_s - M) l_s for the group's G heads, then sets the counter back to zero.
//     When a single split holds visible keys (positions below 128: every short chat) the CTA
//     writes O_s / l_s at once. Longer histories: a merge launch, a CTA per (query head, token):
//     merge_narrow_kernel at D = 128 (four warps, resident beside the split CTAs), merge_kernel else.
//  5. With OutEpilogue (GEMV passes whose O projection takes int8 input), whichever of those writes O
//     also quantizes it in blocks of 32 (a warp a block: the writes go 32 consecutive elements a
//     warp), rmsnorm_q8's arithmetic (store_act_q8), so that launch and its boundary go.
//
// Version 1 (4 warps, a warp per key in both phases, two keys in flight) was latency bound: 68 us
// for a Qwen3-8B layer at depth 4096 (16.8 MB, 246 GB/s) and 38 us at depth 128 (microbench).
// Version 2 (keys of the P V phase in runs of 16 per warp, eight barrier rounds to sum the warps,
// a second merge kernel) spent 7.7 us in the split kernel (8 CTAs, 20 cycles per issued
// instruction, ncu) and 3.4 us in the merge per Qwen3-8B layer at short context (H200, 04deedd).
// This version, in the captured decode graph (H200, Qwen3-8B Q4_K_M tg128): 382.0 / 382.5 ->
// 400.7 / 401.3 tok/s at depth 0 against the same GEMVs with version 2 (577c70d's code); at depth
// 4096 309.7 -> 318.8 against 04deedd (GEMV changes included). Alone (bw24-microbench
// flash_decode, a call at a time) it was slower at long histories: 23.8 -> 26.5 us at depth 4096,
// 165 -> 189 us at 32768, where one CTA per KV head merged 256 splits serially (8 in flight);
// merges of more than kInlineMergeSplits splits went back to a merge kernel (165 us at 32768).
// Then the split's K / V rows prefetched into L2 before the PDL wait and a merge kernel of 8 warps
// (H200, Qwen3-8B Q4_K_M tg128, main 14134eb beside 44224cd, two rounds each): depth 4096 324.5 /
// 324.4 -> 334.7 / 335.2, Qwen3-30B-A3B at 4096 289.5 -> 311.0 (JSON); but depth 0 393.8 / 393.5 -> 389.0
// / 388.4. Measured apart (next36): the merge kernel alone 391.5 -> 391.9 at depth 0, 324.2 ->
// 325.7 at 4096; the split kernel's change alone 387.1 / 331.0. The depth-0 loss is the split
// kernel's and not its prefetch (skipping it while one split is visible read 385.6 / 384.4 against
// 393.2 / 392.2): left to explain; the candidates are the position read and the early return of the
// splits past the position now coming before the wait. Microbench: 164 -> 121 us at depth 32768.
// Neither, on top of the fused RoPE below (next39, two rounds): the idle splits waiting before
// they exit 398.3 -> 400.5 at depth 0 (noise), pdl_begin first again 393.7 / 328.2 (worse).
// Then qk_rope_store's work for one-token steps (fused_rope: q / k norm, RoPE, the token's key and
// value into the cache; the same code, cuda/ops/rope.cuh), a launch and a boundary a layer fewer:
// 387.3 / 334.3 -> 398.3 / 347.5 at depth 0 / 4096, q8_0 KV 372.7 / 332.2 -> 382.7 / 350.7; but
// Qwen3-30B-A3B 363 -> 356 at depth 0 (G = 8: warp 0 rotated its query and then the key, two
// double sincos chains after the wait). With the angles computed before the wait (rope_angles,
// next41, two rounds): Qwen3-8B 398.0 -> 402.2, Qwen3-30B-A3B 356.5 -> 370.0, depth 4096 unchanged.
#include <algorithm>
#include <atomic>
#include <type_traits>

#include <cuda_fp16.h>
#include <math.h>

#include "cuda/attention/flash.cuh"
#include "cuda/attention/decode_mma.cuh"
#include "cuda/attention/kv_load.cuh"
#include "cuda/common/act_q8.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"
#include "cuda/ops/rope.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32, kSplit = kFlashDecodeSplit, kMaxGroup = kFlashDecodeMaxGroup;
constexpr int kSumSlots = kWarps / 2;  // the P V partials of warps 4..7 meet those of warps 0..3
static_assert(kSplit * 2 == kThreads, "two threads per key in the score phase");
static_assert(kMaxGroup <= kWarps, "a warp per head in the softmax phase");
static_assert(kSumSlots == 4, "the final sum adds four slots in a fixed order");
// The scratch starts with the merge counters, one per (token, KV head, head group) at
// (t n_head_kv + g) groups + hg, at the same place for every call (calls of other token counts
// lay out the partials differently).
constexpr int kCounters = kFlashDecodeMaxTokens * kFlashDecodeMaxKvHeads * kMaxGroup;
// Up to this many visible splits (1024 positions) the last CTA merges, a split a warp; past that a
// merge kernel with a CTA per query head does it. H200, Qwen3-8B Q4_K_M tg128 with the last CTA
// merging up to 32 / 8 / 1 splits (its merge then serial in the splits): depth 1024 339.3 / 353.1 /
// 353.3 tok/s, depth 4096 330.2 / 329.2 / 329.3, depth 0 400.2 / 400.7 / 394.9 (the merge kernel's
// launch); microbench at depth 32768: 189 us with no merge kernel, 165 with it. Up to 16 with the
// one-round-trip merge (two past 8 splits) lost too: positions 1,025-1,664 -0.7 % (round 53, next294).
// The merge kernel is launched only when n_ctx has more splits than this, and returns at once
// while a token's visible splits are this few.
constexpr int kInlineMergeSplits = 8;
// Where the split kernel triggers its successor after its wait (flash_decode's late_trigger): a
// token that sees at most this many splits (positions below 256 without a sliding window; longer
// histories unmeasured either way, flash_decode says why).
constexpr int kLateTriggerSplits = 2;
// The late trigger itself (flash_decode says where and why): on unless BW24_FLASH_LATE_TRIGGER=0.
std::atomic<int> g_late_trigger{-1};
bool flash_decode_late_trigger() { return env_switch(g_late_trigger, "BW24_FLASH_LATE_TRIGGER"); }

// The first cache position a token at position p sees, and its visible splits: [first / kSplit,
// p / kSplit].
__device__ __forceinline__ int64_t first_visible(int64_t p, int window) {
  return window > 0 ? max(int64_t{0}, p - window + 1) : 0;
}
struct Visible {
  int lo, end;  // splits [lo, end)
};
__device__ __forceinline__ Visible visible_splits(int64_t p, int window, int n_splits) {
  return {static_cast<int>(first_visible(p, window) / kSplit), static_cast<int>(min(int64_t{n_splits}, p / kSplit + 1))};
}

// The eight warps' accumulators (G x D / 32 per lane, element lane * kPer + e of each head) summed
// into red in a fixed order with two barriers: warps 4..7 store theirs, warps 0..3 add them to
// their own and store; red_total then adds the four slots. Not float atomics: on sm_90 a
// shared-memory float atomicAdd compiles to a CAS spin loop (ATOMS.CAST.SPIN in the SASS), and
// eight warps spinning on the same G x D addresses were the kernel's fixed cost (14 us per layer at
// depth ~0 for D = 128, 22 us for D = 256; ncu).
// A lane's kPer elements move as one vector (float2 at D = 64, float4 above): scalar stores at a
// 4-word lane stride were 4-way bank conflicts (ncu at depth 4096: 2.5-way on average over the
// kernel's shared stores).
template <int D, int kHeads>
__device__ __forceinline__ void sum_warps(float (&red)[kSumSlots][kMaxGroup][D], const float (&acc)[kHeads][D / 32],
                                          int G, int warp, int lane) {
  constexpr int kPer = D / 32, kVec = kPer % 4 == 0 ? 4 : 2;
  using Vec = std::conditional_t<kVec == 4, float4, float2>;
  static_assert(kPer % kVec == 0, "whole vectors a lane");
  auto vec = [&](int slot, int i, int e) -> Vec& { return *reinterpret_cast<Vec*>(&red[slot][i][lane * kPer + e]); };
  if (warp >= kSumSlots)
#pragma unroll
    for (int i = 0; i < kHeads; ++i)
      if (i < G)
#pragma unroll
        for (int e = 0; e < kPer; e += kVec) {
          Vec v;
          float* f = reinterpret_cast<float*>(&v);
#pragma unroll
          for (int k = 0; k < kVec; ++k) f[k] = acc[i][e + k];
          vec(warp - kSumSlots, i, e) = v;
        }
  __syncthreads();
  if (warp < kSumSlots)
#pragma unroll
    for (int i = 0; i < kHeads; ++i)
      if (i < G)
#pragma unroll
        for (int e = 0; e < kPer; e += kVec) {
          Vec v = vec(warp, i, e);
          float* f = reinterpret_cast<float*>(&v);
#pragma unroll
          for (int k = 0; k < kVec; ++k) f[k] = acc[i][e + k] + f[k];
          vec(warp, i, e) = v;
        }
  __syncthreads();
}
// The four slots' sum at index x of a slot: x = h D + d for element (h, d) in sum_warps' layout,
// decode_mma::frag_index(h, d) in sum_fragments'.
template <int D>
__device__ __forceinline__ float red_total(const float (&red)[kSumSlots][kMaxGroup][D], int x) {
  const float* f = &red[0][0][0];
  constexpr int kSlot = kMaxGroup * D;
  return (f[x] + f[kSlot + x]) + (f[2 * kSlot + x] + f[3 * kSlot + x]);
}

// sum_warps for the tensor-core P V (decode_mma.cuh): a warp's accumulator fragments, a slot laid
// out [tile][register][lane] (consecutive lanes, consecutive words: no bank conflicts), the same
// fixed order and two barriers.
template <int D>
__device__ __forceinline__ void sum_fragments(float (&red)[kSumSlots][kMaxGroup][D],
                                              const float (&o)[decode_mma::kHeadTiles<D>][4], int warp, int lane) {
  float* f = &red[0][0][0];
  constexpr int kSlot = kMaxGroup * D, kT = decode_mma::kHeadTiles<D>;
  static_assert(kSlot == kT * 4 * 32, "a slot holds a warp's fragments");
  if (warp >= kSumSlots)
#pragma unroll
    for (int T = 0; T < kT; ++T)
#pragma unroll
      for (int e = 0; e < 4; ++e) f[(warp - kSumSlots) * kSlot + (T * 4 + e) * 32 + lane] = o[T][e];
  __syncthreads();
  if (warp < kSumSlots)
#pragma unroll
    for (int T = 0; T < kT; ++T)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float& x = f[warp * kSlot + (T * 4 + e) * 32 + lane];
        x = o[T][e] + x;
      }
  __syncthreads();
}

// Element d of O row `row` ([t][head]) through the epilogue: out = o (times sigmoid(gate), sigmoid_mul's
// helper); q, ds as OutEpilogue says (flash.cuh), or, kQ8Step, int8 without a gate. The caller's
// whole warp holds 32 consecutive elements of a row (one int8 block).
template <bool kQ8Step>
__device__ __forceinline__ void o_epilogue(const OutEpilogue& ep, float* out, float o, int64_t row, int64_t d, int D) {
  if (!kQ8Step && ep.gate) o *= sigmoid(ep.gate[row * ep.gate_stride + d]);
  const int64_t at = row * D + d;
  out[at] = o;
  if (kQ8Step || ep.q) store_act_q8(o, ep.q + at, ep.ds + at / 32);
}

// The fused writer's arguments with what the instance knows as constants: the head size, and the
// cache type where Kv names one (every instance but KvAny's; flash_decode checks that the rope's
// types are the cache's). store_kv / put_key then compile to that type's stores alone, not a switch
// over six types. The code a CTA walks is the reason: the f16 D = 128 one-head instance went from
// 7,200 SASS instructions (~113 KB, the six stores inlined in the writer's path) to 4,512, D = 256
// from 10,680 to 5,688 (with 16 bytes of spill stores there), and one CTA runs this kernel once a
// layer, mostly straight-line code, from a cold instruction cache. H200, tg128 `-p 16 -r 3`, two
// rounds (next180): Qwen3-8B Q4_K_M 555.3 / 558.6 -> 576.1 / 579.4, Qwen3.5-9B 541.4 / 538.0 ->
// 546.4 / 550.3, Qwen3-30B-A3B 532.6 / 531.9 -> 554.2 / 552.0; its trace segment 7.4-8.0 -> 5.5-6.3
// us a Qwen3-8B layer (next177, next182).
template <typename Kv>
constexpr int kCacheType = -1;  // KvAny: the types at run time
template <>
constexpr int kCacheType<const float*> = static_cast<int>(KvDtype::kF32);
template <>
constexpr int kCacheType<const __half*> = static_cast<int>(KvDtype::kF16);
template <>
constexpr int kCacheType<const __nv_bfloat16*> = static_cast<int>(KvDtype::kBF16);
template <>
constexpr int kCacheType<KvQ8> = static_cast<int>(KvDtype::kQ8_0);
template <>
constexpr int kCacheType<KvQ4> = static_cast<int>(KvDtype::kQ4_0);
template <>
constexpr int kCacheType<KvFp8> = static_cast<int>(KvDtype::kFp8E4M3);
template <typename Kv, int D>
__device__ __forceinline__ QkRopeArgs typed_rope_args(QkRopeArgs a) {
  if constexpr (kCacheType<Kv> >= 0) a.kv_type = KvTypes(static_cast<KvDtype>(kCacheType<Kv>));
  a.head_dim = D;
  return a;
}

// Kv: const float*, const __half* or KvQ8 (kv_load.cuh): the cache as a pointer-like value.
// kMinCtas: the tensor-core instances (decode_mma.cuh) are held to two CTAs an SM (100-120 registers
// at D = 128; 128 with 8-40 bytes of spills at D = 256, ptxas -v), so that the 8 x 33 CTAs of a
// Qwen3-8B layer at depth 4096 are one wave. Before them the q8_0 cache's
// four-head instance at D = 128 was held to three (80 registers): 377.5 / 379.1 -> 379.8 / 380.1 tok/s
// at depth 4096 (H200, tg128), while the f16 one lost with a bound (371.7 / 372.5 -> 369.0 / 369.7). 0: no
// bound (an explicit 1 gave the compiler a larger register budget: 64 -> 84 for one head).
template <typename Kv, int D, int kG, bool kQ8Step, int kMinCtas = decode_mma::kTakes<Kv, D> ? 2 : 0>
__global__ void __launch_bounds__(kThreads, kMinCtas)
    split_kernel(float* out, float* part_o, float2* part_ml, unsigned* done, const float* q, Kv kc, Kv vc, int n_head,
                 int n_head_kv, DevicePos pos, int window, float scale, int n_splits, QkRopeArgs ra_arg,
                 bool fused_arg, OutEpilogue ep, int groups, bool history_ready, bool late_trigger) {
  const QkRopeArgs ra = typed_rope_args<Kv, D>(ra_arg);
  const bool fused = kQ8Step || fused_arg;
  constexpr int kPer = D / 32, kHalf = D / 2, kKeysPerStep = 8;
  // kG: the CTA's query heads when known at compile time (1, 4 or 8, launch_split), else 0 and up to
  // kMaxGroup at run time; the per-head loops and accumulators have kHeads entries.
  constexpr int kHeads = kG > 0 ? kG : kMaxGroup;
  // Query rows with kQsPad words between their halves: the score phase's threads 2j and 2j + 1 read
  // halves 0 and 1 of a row at once, which without the pad start in the same bank (a 2-way conflict
  // on every float4 read; ncu at depth 4096: 2.4-way over the kernel's shared loads).
  constexpr int kQsPad = 4;
  auto qcol = [](int i) { return i + (i / kHalf) * kQsPad; };
  __shared__ alignas(16) float qs[kMaxGroup][D + kQsPad];
  __shared__ float sc[kMaxGroup][kSplit];
  __shared__ alignas(16) float red[kSumSlots][kMaxGroup][D];
  __shared__ float2 ml[kMaxGroup];
  __shared__ bool last;
  // The successor's launch: at once, or, late_trigger, after the wait where the token sees at most
  // kLateTriggerSplits splits, else once the position is known (flash_decode says why).
  if (!late_trigger) pdl_trigger();
  // CTA (g groups + hg, s, t): query heads h0 .. h0 + G - 1 of KV head g, its head group hg of `groups`.
  // Where a merge launch follows (more than kInlineMergeSplits splits in the grid), the splits run in
  // reverse launch order: the grid covers n_ctx (positions live on the device), and its key-less
  // splits, last in blockIdx order, waited for a slot behind the visible CTAs (8 x 33 fill the 2 x 132
  // slots on Qwen3-8B at depth 4096) before the grid could complete and release the merge. Reversed,
  // they are dispatched first and return at once. The same arithmetic in any order. H200, tg128 at
  // depth 4096: Qwen3-8B Q4_K_M +1.0 % (f16 and q8_0 caches); newest-first with the key-less splits
  // last gained nothing (docs/performance.md, round 58). Grids of at most 8 splits keep their order.
  const int g = blockIdx.x / groups, hg = blockIdx.x % groups, t = blockIdx.z;
  const int s = gridDim.y > kInlineMergeSplits ? gridDim.y - 1 - blockIdx.y : blockIdx.y;
  const int G = kG > 0 ? kG : n_head / n_head_kv / groups, h0 = (g * groups + hg) * G;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The position is read before the PDL wait: pos.dev is written before the step's first kernel
  // (a copy node, set_step, or the previous step's choice kernel: cuda_runner.cpp), never by a
  // kernel of the step.
  const int64_t p = pos.base + t + (pos.dev ? *pos.dev : 0);
  const int64_t lo = max(first_visible(p, window), int64_t{s} * kSplit), hi = min(p, int64_t{s + 1} * kSplit - 1);
  const int64_t slot0 = (int64_t{t} * n_head + h0) * n_splits;  // head h0 + i, split s: slot0 + i * n_splits + s
  if (lo > hi) return;  // nothing of this split is visible (past the position, or before the window)
  const Visible vis = visible_splits(p, window, n_splits);
  const bool late = late_trigger && vis.end - vis.lo <= kLateTriggerSplits;
  if (late_trigger && !late) pdl_trigger();
  const int64_t kvw = int64_t{n_head_kv} * D;
  const int n = static_cast<int>(hi - lo + 1);
  // The split's K and V rows into L2 before the wait, thread 2j + h the half row h of key j (the
  // score phase's split): the 64 KB of an f16 split at D = 128 are requested at once, overlapping the
  // predecessor's tail, where the score and P V phases otherwise each waited a DRAM round trip (the
  // V loads after the softmax). Only key p is written after the prefetch (by qk_rope_store, or by this
  // kernel when fused), and L2 is where writes land, so a line fetched early is never stale (L1 is
  // not filled).
  if (threadIdx.x / 2 < n) {
    const int64_t e = (lo + threadIdx.x / 2) * kvw + g * D + (threadIdx.x % 2) * kHalf;
    prefetch_kv(kc + e, kHalf);
    prefetch_kv(vc + e, kHalf);
  }
  // Keys ahead (kKeysAhead: the scalar path's bf16 caches at D = 128, four-head and one-head CTAs;
  // f16 and q8_0 caches there take the tensor-core path, which loads its keys ahead the same way):
  // the thread's half key into registers before the wait, so that the score phase after it does not
  // start with a round trip to L2 or DRAM (the prefetch above only brings the lines to L2). Only rows
  // below the call's first position p - t, and only where the caller says they were complete at
  // launch (history_ready, flash.cuh): the kernels before the wait may still be writing others. Same
  // values, same arithmetic. H200, Qwen3-8B tg128 at depth 4096 when f16 and q8_0 took it too: f16
  // 372.6 -> 387.7 tok/s, q8_0 380 -> 386.5 (next83, next84), ~2.9 us a layer; at depth 0 (one head)
  // 441 -> 456, q8_0 422 -> 429, Qwen3-30B-A3B 470.5 -> 490.8 (next89).
  // The tensor-core products (decode_mma.cuh) for f16 and q8_0 caches at D = 128 and 256, every head
  // count; kParts: the 128-dim parts of a head the fragments walk (decode_mma.cuh).
  constexpr bool kMma = decode_mma::kTakes<Kv, D>;
  constexpr int kParts = kMma ? decode_mma::kParts<D> : 1, kPartDims = decode_mma::kD;
  constexpr bool kKeysAhead = (kG == 4 || kG == 1) && D == 128 && std::is_same_v<Kv, const __nv_bfloat16*>;
  struct NoKeyRegs {};
  std::conditional_t<kKeysAhead, KeyRegs<Kv, kHalf>, NoKeyRegs> key;
  const bool key_early = kKeysAhead && history_ready && threadIdx.x / 2 < n && lo + threadIdx.x / 2 < p - t;
  if constexpr (kKeysAhead)
    if (key_early) key.load(kc + ((lo + threadIdx.x / 2) * kvw + g * D + (threadIdx.x % 2) * kHalf));
  // The tensor-core path's keys ahead: the lane's two keys 16 warp + lane / 4 (+ 8), its 64 bytes (f16)
  // or 32 bytes and four scales (q8_0) of each (part 0 of the head), under the same conditions.
  auto head_row = [&](Kv cache, int j) { return cache + ((lo + j) * kvw + g * D); };  // key j's row of head g
  struct NoKeyFrag {};
  std::conditional_t<kMma, decode_mma::KeyFrag<Kv>, NoKeyFrag> kfrag;
  const int mkey = warp * 16 + lane / 4;
  bool mkey_early[2] = {false, false};
  if constexpr (kMma)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int j = mkey + 8 * i;
      mkey_early[i] = history_ready && j < n && lo + j < p - t;
      if (mkey_early[i]) kfrag.load(i, head_row(kc, j), lane % 4);
    }
  // Fused with qk_rope_store (one token): this lane's norm weights and angles (one double sincos a
  // rotation pair, the query's and the key's) before the wait.
  RopeLane<kPer> cq{}, ck{};
  RopeAngles<kPer> ang{};
  if (fused) {
    cq = rope_lane<kPer>(ra, true, lane);
    ck = rope_lane<kPer>(ra, false, lane);
    if (!ra.angles) ang = rope_angles<kPer>(ra, p, lane);
  }
  pdl_wait();
  if (late) pdl_trigger();
  // The step's angles from rope_table (written before this layer's first kernel), loaded with the
  // query rows below: one L2 round trip they share, where every CTA computing them before the wait
  // (a double sincos a pair) took a split CTA 4.6 us there at depth 4096 (next197's timing build).
  if (fused && ra.angles) ang = table_angles<kPer>(ra, lane);
  if (fused) {
    // The work of qk_rope_store, with its code (cuda/ops/rope.cuh): warp i < G normalizes and
    // rotates query head g G + i (raw, from the QKV product) into qs; the split that holds position
    // p also writes the token's key and value head g into the cache (a free warp, or warp 0 after
    // its query), which its score and P V phases read back after the barrier below (a block's
    // global writes are visible to the block after __syncthreads). Scratch: red, unused until P V.
    // The writer's key and value rows are loaded with the query rows, one round trip for all three.
    float* scratch = &red[0][0][0];
    static_assert(kSumSlots * kMaxGroup >= kWarps + 3, "red holds a head row a warp, the key's, its ko and vo");
    const bool writer = p / kSplit == s && warp == (G < kWarps ? G : 0);
    LaneRow<kPer> krow{}, vrow{};
    if (writer) {
      krow = load_lane_row<kPer>(ra.k + int64_t{t} * kvw + g * D, D, lane);
      vrow = load_lane_row<kPer>(ra.v + int64_t{t} * kvw + g * D, D, lane);
    }
    if (warp < G)
      norm_rope_row<kPer>(
          ra, cq, ang, true,
          load_lane_row<kPer>(ra.q + (int64_t{t} * n_head + h0 + warp) * (ra.q_stride ? ra.q_stride : D), D, lane),
          scratch + warp * D, lane, [&](int i, float v) { qs[warp][qcol(i)] = v * scale; });
    if (writer) {
      const int64_t kbase = p * kvw + g * D;
      float* ko = scratch + (kWarps + 1) * D;
      norm_rope_row<kPer>(ra, ck, ang, false, krow, scratch + kWarps * D, lane,
                          [&](int i, float v) { put_key(ra, kbase, ko, i, v); });
      store_kv_tail(ra, kbase, ko, ko + D, vrow, lane);
    }
  } else {
    for (int i = threadIdx.x; i < G * D; i += kThreads)
      qs[i / D][qcol(i % D)] = q[(int64_t{t} * n_head + h0) * D + i] * scale;
  }
  __syncthreads();

  // 1. Scores: thread 2j + h takes half h of key j (the tensor-core path: warp w keys 16w .. 16w + 15).
  struct NoValueFrag {};
  std::conditional_t<kMma, decode_mma::ValueFrag<Kv>, NoValueFrag> vfrag;
  // The tensor-core path's values of part `part` (128 dims) for the lane's four keys of warp w's 16
  // (decode_mma::value_key), zero past the split's n keys.
  auto load_values = [&](int part) {
    if constexpr (kMma) {
      const int c = lane % 4, r = lane / 4;
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int j = warp * 16 + decode_mma::value_key(u, c);
        if (j < n)
          vfrag.load(u, head_row(vc, j) + part * kPartDims, r);
        else
          vfrag.zero(u);
      }
    }
  };
  if constexpr (kMma) {
    const int c = lane % 4, r = lane / 4;
    float s4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      const int off = part * kPartDims;
#pragma unroll
      for (int i = 0; i < 2; ++i)
        if (part > 0 || !mkey_early[i]) {
          if (mkey + 8 * i < n)
            kfrag.load(i, head_row(kc, mkey + 8 * i) + off, c);
          else
            kfrag.zero(i);
        }
      const decode_mma::QueryFrag qf = decode_mma::query_frag(
          [&](int e) { return *reinterpret_cast<const float4*>(&qs[r][qcol(off + e)]); }, r < G, c);
      kfrag.add_scores(qf, s4);
    }
    // The values of the P V phase (part 0), loaded here: they do not depend on P, so their L2 round
    // trip runs under the softmax's barriers instead of after them.
    load_values(0);
#pragma unroll
    for (int u = 0; u < 4; ++u) {  // (key r, head 2c), (r, 2c + 1), (r + 8, 2c), (r + 8, 2c + 1)
      const int j = mkey + 8 * (u / 2), i = 2 * c + u % 2;
      if (i < G && j < n) sc[i][j] = s4[u];
    }
  } else {
    const int j = threadIdx.x / 2, h = threadIdx.x % 2;
    float acc[kHeads] = {};
    if (j < n) {
      const Kv row = kc + ((lo + j) * kvw + g * D + h * kHalf);
      float k[kHalf / 8][8];
      if constexpr (kKeysAhead) {
        if (!key_early) key.load(row);
#pragma unroll
        for (int c = 0; c < kHalf / 8; ++c) key.unpack(c, k[c]);
      } else {
#pragma unroll
        for (int c = 0; c < kHalf / 8; ++c) load8(row + 8 * c, k[c]);
      }
#pragma unroll
      for (int c = 0; c < kHalf / 8; ++c)
#pragma unroll
        for (int i = 0; i < kHeads; ++i)
          if (i < G) {
            const float4 qa = *reinterpret_cast<const float4*>(&qs[i][h * (kHalf + kQsPad) + 8 * c]);
            const float4 qb = *reinterpret_cast<const float4*>(&qs[i][h * (kHalf + kQsPad) + 8 * c + 4]);
            acc[i] += qa.x * k[c][0] + qa.y * k[c][1] + qa.z * k[c][2] + qa.w * k[c][3] + qb.x * k[c][4] +
                      qb.y * k[c][5] + qb.z * k[c][6] + qb.w * k[c][7];
          }
    }
#pragma unroll
    for (int i = 0; i < kHeads; ++i)
      if (i < G) {
        const float other = __shfl_xor_sync(0xffffffffu, acc[i], 1);
        if (j < n && h == 0) sc[i][j] = acc[i] + other;
      }
  }
  __syncthreads();

  // 2. Softmax pieces of the split, a warp per head.
  if (warp < G) {
    const int i = warp;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, sc[i][j]);
    m = warp_max_redux(m);
    float l = 0;
    for (int j = lane; j < n; j += 32) {
      const float e = expf(sc[i][j] - m);
      sc[i][j] = e;
      l += e;
    }
    l = warp_sum(l);
    if (lane == 0) ml[i] = make_float2(m, l);
  }
  __syncthreads();

  // 3. Unnormalized P V: warp w takes keys w + 8 u, 8 of them in flight per lane (the tensor-core
  // path: keys 16w .. 16w + 15, red in the fragments' layout).
  if constexpr (kMma) {
    const int c = lane % 4, r = lane / 4, j0 = warp * 16;
    float o[decode_mma::kHeadTiles<D>][4] = {};
    if (j0 < n) {
      float pr[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int j = j0 + decode_mma::value_key(u, c);
        pr[u] = j < n && r < G ? decode_mma::kPScale * sc[r][j] : 0.0f;
      }
#pragma unroll
      for (int part = 0; part < kParts; ++part) {
        if (part > 0) load_values(part);  // the later parts' values, after part 0's products
        vfrag.pv(pr, o, part * decode_mma::kTiles);
      }
    }
    sum_fragments<D>(red, o, warp, lane);
  } else {
    float acc[kHeads][kPer] = {};
    const Kv vbase = vc + (lo * kvw + g * D + lane * kPer);
    for (int j0 = warp; j0 < n; j0 += kWarps * kKeysPerStep) {
      float v[kKeysPerStep][kPer];
#pragma unroll
      for (int u = 0; u < kKeysPerStep; ++u)
        if (j0 + kWarps * u < n) load_pairs<kPer>(vbase + (j0 + kWarps * u) * kvw, v[u]);
#pragma unroll
      for (int u = 0; u < kKeysPerStep; ++u) {
        if (j0 + kWarps * u >= n) break;
#pragma unroll
        for (int i = 0; i < kHeads; ++i)
          if (i < G) {
            const float pij = sc[i][j0 + kWarps * u];
#pragma unroll
            for (int e = 0; e < kPer; ++e) acc[i][e] += pij * v[u][e];
          }
      }
    }
    sum_warps<D, kHeads>(red, acc, G, warp, lane);
  }
  // Element i (head i / D, dim i % D) of red's four-slot sum: the P V phase's layout, or the fragments'
  // (2^6 P: times 2^-6, exact).
  auto pv_total = [&](int i) {
    if constexpr (kMma)
      return red_total<D>(red, decode_mma::frag_index<Kv>(i / D, i % D)) * decode_mma::kPUnscale;
    else
      return red_total<D>(red, i);
  };
  // O of the group's G heads from ml and total(i), red's sum (pv_total, or the merge's red_total).
  auto write_o = [&](auto total) {
    const int64_t out0 = (int64_t{t} * n_head + h0) * D;
    for (int i = threadIdx.x; i < G * D; i += kThreads)  // G D a multiple of 32: whole warps
      o_epilogue<kQ8Step>(ep, out, total(i) / ml[i / D].y, out0 / D + i / D, i % D, D);
  };
  if (vis.end - vis.lo == 1) {  // the only split with visible keys: O at once
    write_o(pv_total);
    return;
  }
  for (int i = threadIdx.x; i < G * D; i += kThreads)
    part_o[(slot0 + int64_t{i / D} * n_splits + s) * D + i % D] = pv_total(i);
  if (threadIdx.x < G) part_ml[slot0 + threadIdx.x * n_splits + s] = ml[threadIdx.x];
  if (vis.end - vis.lo > kInlineMergeSplits) return;  // merge_kernel's

  // 4. The last CTA of (g, t) to finish merges. The fence orders this CTA's partials before its
  // count (every thread fences its own stores; the barrier makes them precede thread 0's atomic).
  __threadfence();
  __syncthreads();
  unsigned* count = done + (int64_t{t} * n_head_kv + g) * groups + hg;
  if (threadIdx.x == 0) {
    last = atomicAdd(count, 1u) == static_cast<unsigned>(vis.end - vis.lo - 1);
    __threadfence();
  }
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) *count = 0;  // for the next call (the kernel's end orders it)
  // Per head: M = max_s m_s and L = sum_s e^(m_s - M) l_s; then sum_s e^(m_s - M) O_s in the P V
  // phase's layout, warp w taking split lo + w (at most kWarps splits here), lanes the row, then the
  // same two-barrier sum. Partials are L2 reads (other CTAs wrote them); an empty split, l = 0,
  // adds nothing.
  // One L2 round trip: every warp loads its split's rows and every head's (m, l) of all splits at
  // once, and finds (M, L) itself (lanes over the splits, one butterfly: the same bits in every
  // warp). The previous form (a warp per head found (M, L), a barrier, then the rows) waited two.
  // H200, tg128 `-p 0 -d 512 -n 128` (positions 513-640: five splits, the last CTA merging; next291,
  // one binary with a switch): Qwen3-8B Q4_K_M 546.5 / 546.6 -> 557.6 / 558.3 tok/s (+2.1 %),
  // Qwen3-30B-A3B 593.6 -> 610.4 (+2.8 %): ~1 us a layer, one L2 round trip and a barrier.
  float acc[kHeads][kPer] = {};
  static_assert(kInlineMergeSplits <= kWarps && kInlineMergeSplits <= 32, "a split a warp, a split a lane");
  const int j = vis.lo + warp;
  float2 mine[kHeads], hv[kHeads];
  float po[kHeads][kPer];
#pragma unroll
  for (int i = 0; i < kHeads; ++i)
    if (i < G) {
      const int64_t slot = slot0 + int64_t{i} * n_splits;
      hv[i] = vis.lo + lane < vis.end ? __ldcg(&part_ml[slot + vis.lo + lane]) : make_float2(0.0f, 0.0f);
      mine[i] = j < vis.end ? __ldcg(&part_ml[slot + j]) : make_float2(0.0f, 0.0f);
#pragma unroll
      for (int e = 0; e < kPer; e += 2) {
        const float2 x = j < vis.end ? __ldcg(reinterpret_cast<const float2*>(part_o + (slot + j) * D + lane * kPer + e))
                                     : make_float2(0.0f, 0.0f);
        po[i][e] = x.x;
        po[i][e + 1] = x.y;
      }
    }
#pragma unroll
  for (int i = 0; i < kHeads; ++i)
    if (i < G) {
      float m = -INFINITY, l = 0;
      if (hv[i].y > 0) m = fmaxf(m, hv[i].x);
      m = warp_max_redux(m);
      if (hv[i].y > 0) l += expf(hv[i].x - m) * hv[i].y;
      l = warp_sum(l);
      if (warp == 0 && lane == 0) ml[i] = make_float2(m, l);  // write_o's, read after sum_warps' barriers
      const float w = mine[i].y > 0 ? expf(mine[i].x - m) : 0.0f;
#pragma unroll
      for (int e = 0; e < kPer; ++e) acc[i][e] += mine[i].y > 0 ? w * po[i][e] : 0.0f;
    }
  sum_warps<D, kHeads>(red, acc, G, warp, lane);
  write_o([&](int i) { return red_total<D>(red, i); });
}

// The merge of tokens with more than kInlineMergeSplits visible splits at D = 64 and 256 (D = 128:
// merge_narrow_kernel below), a CTA of 8 warps per (query head, token): O = sum_s e^(m_s - M) O_s / L, L = sum_s
// e^(m_s - M) l_s, over the visible splits only (the grid covers n_ctx). Warp w takes splits lo + w + 8 k, lanes
// over the row (D / 32 elements), six splits' (m, l) and rows loaded before any is used (48 splits in flight a CTA:
// at depth 4096, 33 splits, one L2 round trip for the whole merge), and sums them under its own running max m_w;
// after the barrier every thread finds M over the eight m_w and adds the warps' rows and sums, each scaled by
// e^(m_w - M), in a fixed order (the same values in every thread). The previous forms: a thread per element walking
// the splits four at a time waited ~9 L2 round trips at depth 4096 (8.8 us a Qwen3-8B layer, nsys, 06367c5); then
// every warp found (M, L) itself before its sums (lanes over the splits, then a five-step butterfly of two shuffles
// and two expf each), a serial chain between the loads' arrival and the first product. Without it (round 56,
// next313, one binary, tg128 at depth 4096, H200): Qwen3-8B Q4_K_M 495.7 / 496.1 -> 502.9 / 503.3 (+1.4 %), with a
// q8_0 cache 517.8 -> 520.8, Qwen3-30B-A3B 542.3 -> 554.9 (+2.3 %).
template <int D>
__global__ void __launch_bounds__(kThreads) merge_kernel(float* out, const float* part_o, const float2* part_ml,
                                                         int n_head, int n_splits, DevicePos pos, int window, OutEpilogue ep) {
  constexpr int kPer = D / 32, kRun = 6;
  static_assert(kWarps == 8, "the final sum adds eight rows in a fixed order");
  __shared__ float red[kWarps][D];
  __shared__ float2 warp_ml[kWarps];  // (m_w, l_w) of each warp's splits
  const int h = blockIdx.x, t = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t slot0 = (int64_t{t} * n_head + h) * n_splits;
  // The position before the wait (split_kernel's reason: the step's host copy writes pos.dev); the
  // early return after it, so that this grid completes only after the split kernel has (the next
  // kernel's wait covers split_kernel's partials and O through this grid's completion).
  const Visible vis = visible_splits(pos.base + t + (pos.dev ? *pos.dev : 0), window, n_splits);
  pdl_begin();
  if (vis.end - vis.lo <= kInlineMergeSplits) return;  // split_kernel merged (or wrote O)
  // A run: kRun splits of this warp (lo + warp + 8 u), their (m, l) and the lane's kPer elements
  // of O_s, every load issued before any is used. (m, l) is the same in every lane of the warp.
  float2 v[kRun];
  float po[kRun][kPer];
  auto load_run = [&](int s0) {
#pragma unroll
    for (int u = 0; u < kRun; ++u) {
      const int s = s0 + kWarps * u;
      v[u] = s < vis.end ? __ldcg(&part_ml[slot0 + s]) : make_float2(0.0f, 0.0f);
#pragma unroll
      for (int e = 0; e < kPer; e += 2) {
        const float2 x = s < vis.end ? __ldcg(reinterpret_cast<const float2*>(part_o + (slot0 + s) * D + lane * kPer + e))
                                     : make_float2(0.0f, 0.0f);
        po[u][e] = x.x;
        po[u][e + 1] = x.y;
      }
    }
  };
  // A run's splits under the run's max rm (the earlier runs' sums rescaled to it once); an empty
  // split (l = 0: none of its keys in range) adds nothing, and a warp whose splits are all empty
  // keeps m_w = -inf, l_w = 0.
  float acc[kPer] = {};
  float mw = -INFINITY, lw = 0.0f;
  load_run(vis.lo + warp);  // more than kInlineMergeSplits splits: every warp has one
  for (int s0 = vis.lo + warp;;) {
    float rm = mw;
#pragma unroll
    for (int u = 0; u < kRun; ++u)
      if (v[u].y > 0) rm = fmaxf(rm, v[u].x);
    const float c = mw == -INFINITY ? 0.0f : expf(mw - rm);
    lw *= c;
#pragma unroll
    for (int e = 0; e < kPer; ++e) acc[e] *= c;
#pragma unroll
    for (int u = 0; u < kRun; ++u) {
      const float w = v[u].y > 0 ? expf(v[u].x - rm) : 0.0f;
      lw += v[u].y > 0 ? w * v[u].y : 0.0f;
#pragma unroll
      for (int e = 0; e < kPer; ++e) acc[e] += v[u].y > 0 ? w * po[u][e] : 0.0f;
    }
    mw = rm;
    s0 += kWarps * kRun;
    if (s0 >= vis.end) break;
    load_run(s0);
  }
#pragma unroll
  for (int e = 0; e < kPer; ++e) red[warp][lane * kPer + e] = acc[e];
  if (lane == 0) warp_ml[warp] = make_float2(mw, lw);
  __syncthreads();
  float M = -INFINITY, c[kWarps];
#pragma unroll
  for (int w = 0; w < kWarps; ++w) M = fmaxf(M, warp_ml[w].x);
#pragma unroll
  for (int w = 0; w < kWarps; ++w) c[w] = warp_ml[w].y > 0 ? expf(warp_ml[w].x - M) : 0.0f;
  auto sum8 = [&](auto x) {
    return ((c[0] * x(0) + c[1] * x(1)) + (c[2] * x(2) + c[3] * x(3))) +
           ((c[4] * x(4) + c[5] * x(5)) + (c[6] * x(6) + c[7] * x(7)));
  };
  const float L = sum8([&](int w) { return warp_ml[w].y; });
  for (int d = threadIdx.x; d < D; d += kThreads) {  // D a multiple of 32: whole warps
    const float o = sum8([&](int w) { return red[w][d]; }) / L;
    o_epilogue<false>(ep, out, o, int64_t{t} * n_head + h, d, D);
  }
}

// The merge at D = 128 (the Qwen3 and Llama 3 shapes): 128 threads held to 64 registers (62, ptxas), so that its
// CTAs fit beside two split CTAs, whose 2 x 256 x 112 registers leave 8 K of the SM's 64 K, and are
// resident, waiting at the PDL wait, before the split grid ends. merge_kernel's 256 x 72 did not fit
// there: on Qwen3-8B its CTAs got an SM only as split CTAs left (its trace segment 3.6 us a layer,
// against 2.3 us on Qwen3-30B-A3B, whose 4 x 37 split CTAs leave SMs free; round 58). Warp w holds
// dims 32 w .. 32 w + 31, a lane one element; a chunk of kNarrowChunk splits is one L2 round trip
// (every load issued before any is used), the (m, l) of split s0 + j in lane j % 32, its weight
// broadcast by a shuffle. No shared memory and no barrier: every warp finds the same M and L. One
// running sum in split order (other bits than merge_kernel's eight slots). H200, tg128 `-p 512 -n 128
// -d 4096 -r 2`, one binary, merge_kernel -> this (next323): Qwen3-8B Q4_K_M 507.2 / 508.2 -> 515.5 /
// 515.2 (+1.6 %), q8_0 KV 527.8 -> 536.1, Qwen3-30B-A3B 557.0 / 556.4 -> 565.4 / 565.6; depth 0 (no
// merge launch) 600.8 / 600.9.
constexpr int kNarrowThreads = 128, kNarrowChunk = 40;
__global__ void __launch_bounds__(kNarrowThreads, 8)
    merge_narrow_kernel(float* out, const float* part_o, const float2* part_ml, int n_head, int n_splits,
                        DevicePos pos, int window, OutEpilogue ep) {
  constexpr int D = 128;
  static_assert(kNarrowChunk > 32 && kNarrowChunk <= 64, "two (m, l) a lane");
  const int h = blockIdx.x, t = blockIdx.y, d = threadIdx.x, lane = threadIdx.x % 32;
  const int64_t slot0 = (int64_t{t} * n_head + h) * n_splits;
  const Visible vis = visible_splits(pos.base + t + (pos.dev ? *pos.dev : 0), window, n_splits);
  pdl_begin();
  if (vis.end - vis.lo <= kInlineMergeSplits) return;  // split_kernel merged (or wrote O)
  float acc = 0.0f, M = -INFINITY, L = 0.0f;
  for (int s0 = vis.lo; s0 < vis.end; s0 += kNarrowChunk) {
    float po[kNarrowChunk];
#pragma unroll
    for (int i = 0; i < kNarrowChunk; ++i) po[i] = s0 + i < vis.end ? __ldcg(part_o + (slot0 + s0 + i) * D + d) : 0.0f;
    const int ja = s0 + lane, jb = s0 + 32 + lane;
    const float2 a = ja < vis.end ? __ldcg(&part_ml[slot0 + ja]) : make_float2(0.0f, 0.0f);
    const float2 b = lane < kNarrowChunk - 32 && jb < vis.end ? __ldcg(&part_ml[slot0 + jb]) : make_float2(0.0f, 0.0f);
    const float cm = warp_max_redux(fmaxf(a.y > 0 ? a.x : -INFINITY, b.y > 0 ? b.x : -INFINITY));
    const float m = fmaxf(M, cm);
    const float c = M == -INFINITY ? 0.0f : expf(M - m);
    const float wa = a.y > 0 ? expf(a.x - m) : 0.0f, wb = b.y > 0 ? expf(b.x - m) : 0.0f;
    L = L * c + warp_sum(wa * a.y + wb * b.y);
    acc *= c;
#pragma unroll
    for (int i = 0; i < kNarrowChunk; ++i) acc += __shfl_sync(0xffffffffu, i < 32 ? wa : wb, i % 32) * po[i];
    M = m;
  }
  o_epilogue<false>(ep, out, acc / L, int64_t{t} * n_head + h, d, D);
}

int splits_for(int n_ctx) { return (n_ctx + kSplit - 1) / kSplit; }

template <typename Kv, int D>
cudaError_t launch_split(dim3 grid, float* out, float* part_o, float2* part_ml, unsigned* done, const float* q, Kv kc,
                         Kv vc, int n_head, int n_head_kv, DevicePos pos, int window, float scale, int n_splits,
                         const QkRopeArgs& ra, bool fused, OutEpilogue ep, int groups, bool history_ready,
                         bool late_trigger, cudaStream_t stream) {
  // Instances whose per-head loops are as long as the CTA's heads, not kMaxGroup predicated ones
  // (the same arithmetic): one head a CTA (head groups of one, every short history of the Qwen3
  // shapes) and four (the long histories of Qwen3-8B, G = 4: at depth 4096 the f16 kernel ran
  // 22.4 -> 19.9 us a Qwen3-8B layer alone, ncu); eight for the Qwen3 step below.
  const int heads = n_head / (n_head_kv * groups);
  // kQ8Step: the Qwen3 decode step (one token, fused with qk_rope_store, O on as int8 for the O
  // projection, no gate) over f16, bf16 and q8_0 caches at D = 128 takes instances with those flags
  // as constants: the code every CTA walks once a layer, from a cold instruction cache, is what this
  // latency-bound kernel's time follows (the writer compiled for its cache type, above). f16 SASS
  // (sm_90a): one head 4,512 -> 3,856 instructions, four heads 4,688 -> 4,040. H200, tg128 `-p 16
  // -r 3`, two rounds (next187): Qwen3-8B Q4_K_M 578.6 / 578.1 -> 581.5 / 581.4 (+0.5 %); Qwen3-30B-A3B
  // 556.0 / 555.7 -> 554.9 / 555.3 and, with the gate constant too, Qwen3.5-9B (D = 256) 562.6 /
  // 561.6 -> 562.2 / 562.3: no change, so D = 256 keeps the run-time instance. Where kStep is false
  // both arms name the run-time instance. Eight heads a CTA (Qwen3-30B-A3B from position 1,024 with
  // n_ctx above ~4,200: 4 KV heads x n_ctx's splits then fill more than one CTA an SM, so the auto
  // grouping keeps each KV head in one group) take the step instance too:
  // tg128 at depth 4096 526.1 -> 533.3, at 8192 469.2 -> 473.0 (H200, next297, single rows;
  // main's rows at 4096 spread 526.1-528.5 over next295-297).
  constexpr bool kStep = D == 128 && (std::is_same_v<Kv, const __half*> || std::is_same_v<Kv, const __nv_bfloat16*> ||
                                      std::is_same_v<Kv, KvQ8>);
  const bool step = kStep && fused && ep.q && !ep.gate;
  const auto kernel = heads == 1   ? (step ? split_kernel<Kv, D, 1, kStep> : split_kernel<Kv, D, 1, false>)
                      : heads == 4 ? (step ? split_kernel<Kv, D, 4, kStep> : split_kernel<Kv, D, 4, false>)
                      : heads == 8 && step ? split_kernel<Kv, D, kStep ? 8 : 0, kStep>
                                   : split_kernel<Kv, D, 0, false>;
  return launch_pdl(kernel, grid, dim3(kThreads), 0, stream, out, part_o, part_ml, done, q, kc, vc, n_head, n_head_kv,
                    pos, window, scale, n_splits, ra, fused, ep, groups, history_ready, late_trigger);
}

}  // namespace

bool flash_decode_supports(int head_dim, int n_head, int n_head_kv) {
  return (head_dim == 64 || head_dim == 128 || head_dim == 256) && n_head_kv > 0 &&
         n_head_kv <= kFlashDecodeMaxKvHeads && n_head % n_head_kv == 0 && n_head / n_head_kv <= kMaxGroup;
}

int64_t flash_decode_scratch(int n_ctx, int n_tokens, int n_head, int head_dim) {
  return kCounters + int64_t{n_tokens} * n_head * splits_for(n_ctx) * (head_dim + 2);
}

cudaError_t flash_decode_init_scratch(float* scratch) { return cudaMemset(scratch, 0, kCounters * sizeof(unsigned)); }

cudaError_t flash_decode(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv,
                         float* scratch, int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos,
                         int window, float scale, int n_ctx, cudaStream_t stream, const QkRopeArgs* rope,
                         OutEpilogue out_ep, int64_t max_pos, int head_groups, bool history_ready) {
  if (n_tokens <= 0) return cudaSuccess;
  if (!out_ep.q != !out_ep.ds || (out_ep.gate && out_ep.gate_stride < head_dim)) return cudaErrorInvalidValue;
  if (n_tokens > kFlashDecodeMaxTokens || !flash_decode_supports(head_dim, n_head, n_head_kv) || n_ctx <= 0)
    return cudaErrorInvalidValue;
  // Fused with qk_rope_store: one token, the same heads, cache and positions as this call.
  if (rope && (n_tokens != 1 || rope->head_dim != head_dim || rope->n_head != n_head || rope->n_head_kv != n_head_kv ||
               rope->k_cache != k_cache || rope->v_cache != v_cache || rope->kv_type.k != kv.k ||
               rope->kv_type.v != kv.v || rope->n_ctx != n_ctx || rope->rope_dims > head_dim ||
               rope->pos.dev != pos.dev || rope->pos.base != pos.base ||
               (rope->q_stride != 0 && rope->q_stride < head_dim)))
    return cudaErrorInvalidValue;
  const QkRopeArgs ra = rope ? *rope : QkRopeArgs{};
  const int64_t kvw = int64_t{n_head_kv} * head_dim;
  const int n_splits = splits_for(n_ctx);
  auto* done = reinterpret_cast<unsigned*>(scratch);
  float* part_o = scratch + kCounters;
  float2* part_ml = reinterpret_cast<float2*>(part_o + int64_t{n_tokens} * n_head * n_splits * head_dim);
  // The grid covers the splits a position of the call can reach: n_ctx's when the positions live on
  // the device and no bound is known, else up to the bound's split (n_splits stays the scratch's
  // stride). A split past every position only returns, but its CTAs are scheduled: 8 x 37 of them a
  // layer at n_ctx 4,616 where 8 x 8 do below position 1,024 (Qwen3-8B).
  const int64_t bound = pos.dev ? max_pos : pos.base + n_tokens - 1;
  const int grid_splits = bound >= 0 ? static_cast<int>(std::min<int64_t>(n_splits, bound / kSplit + 1)) : n_splits;
  // Head groups: a KV head's G query heads over `groups` CTAs of each split, G / groups heads each,
  // while the grid stays within two CTAs an SM. A CTA's phases are serial in its heads (scores,
  // P V, the O writer), and a short history has one split: the 4 KV heads of Qwen3-30B-A3B were 4
  // CTAs doing 8 heads each (15.4 us a layer alone, 12.5 with the 8B's 4 heads a CTA, ncu; ~10 us a
  // 30B layer in the graph). Each head's arithmetic is the same in any grouping (no sum runs across
  // heads), so the grouping is free to follow the grid: the same bits (kernel check attention and
  // attention_rope, "head groups" rows). Every group's CTA at the position's split writes the
  // token's key and value, the same bytes.
  const int G = n_head / n_head_kv;
  int groups = head_groups;
  if (groups <= 0) {
    const int ctas = n_head_kv * grid_splits * n_tokens, cap = 2 * sm_count();
    groups = 1;
    while (G % (2 * groups) == 0 && ctas * 2 * groups <= cap) groups *= 2;
  }
  if (G % groups != 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(n_head_kv * groups), static_cast<unsigned>(grid_splits),
                  static_cast<unsigned>(n_tokens));
  // Where no merge launch follows and the token sees at most kLateTriggerSplits splits, the split
  // kernel lets its successor launch only after its PDL wait: that successor is the O projection, a
  // streamed GEMV whose CTAs issue their first weight stages as soon as they are resident (the O
  // matrix of a Qwen3-8B layer is 9.4 MB). Launched at the split kernel's start, those copies ran
  // beside the V projection, the DRAM-bound launch before it; after the wait they run under this
  // kernel's latency chain (~5 us at a short history), where DRAM is otherwise idle. H200, tg128
  // `-p 16 -n 128 -r 2` (positions 1-128: bw24-bench decodes from the test's depth), one binary,
  // trigger first -> after the wait: Qwen3-8B Q4_K_M 588.3 / 588.6 / 587.5 / 589.5 -> 595.3 / 595.1 /
  // 592.8 / 596.8 (next281-283), Qwen3-30B-A3B 654.5 / 655.2 -> 658.9 / 658.9 (next282). With `-p
  // 512` (the acceptance command's; the same positions, n_ctx 520 and a 512-token pp test before)
  // no gain: Qwen3-8B 593.4 / 593.3 -> 588.5 / 591.6 (next284), 589.8 -> 589.2 (next285), reason not
  // found (not the grid's key-less CTAs: next290). Timed at one split (next287, stamps in each CTA):
  // the score phase, whose key loads shared DRAM and L2 with those copies, takes 1.0 us instead of
  // 1.8, and the kernel ends 0.8 us sooner. At 3..8 splits (positions 256-1,023) neither order has
  // been measured: kLateTriggerSplits keeps the trigger first there, set on round 51's misreading
  // of `-p 512` as decoding at 512-639 (docs/performance.md, round 52). With a
  // merge launch the trigger stays first: the merge's own early trigger then launches the O
  // projection, and moving either later lost at depth 4096 (495.9 -> 492.9 with the merge's after
  // its wait; the split kernel's after its wait 495.9, no change). BW24_FLASH_LATE_TRIGGER=0: the
  // trigger first everywhere (the A/B switch).
  const bool late_trigger = grid_splits <= kInlineMergeSplits && flash_decode_late_trigger();
  auto go = [&](auto launcher, auto kc, auto vc) {
    return launcher(grid, out, part_o, part_ml, done, q, kc, vc, n_head, n_head_kv, pos, window, scale, n_splits, ra,
                    rope != nullptr, out_ep, groups, history_ready, late_trigger, stream);
  };
  const auto* kf = static_cast<const float*>(k_cache);
  const auto* vf = static_cast<const float*>(v_cache);
  const auto* kh = static_cast<const __half*>(k_cache);
  const auto* vh = static_cast<const __half*>(v_cache);
  const auto* kb = static_cast<const __nv_bfloat16*>(k_cache);
  const auto* vb = static_cast<const __nv_bfloat16*>(v_cache);
  const KvQ8 k8 = kv_q8(k_cache, n_ctx, kvw), v8 = kv_q8(v_cache, n_ctx, kvw);
  const KvQ4 k4 = kv_q4(k_cache, n_ctx, kvw), v4 = kv_q4(v_cache, n_ctx, kvw);
  const KvFp8 kp{static_cast<const uint8_t*>(k_cache), 0}, vp{static_cast<const uint8_t*>(v_cache), 0};
  constexpr int kTypes = 8;  // KvDtype values, with room
  const int64_t elems = int64_t{n_ctx} * kvw;
  const KvAny ka{static_cast<const uint8_t*>(k_cache), elems, kv.k, 0}, va{static_cast<const uint8_t*>(v_cache), elems, kv.v, 0};
  const int type = kv.k == kv.v ? static_cast<int>(kv.k) : kTypes - 1;  // K != V: the run-time typed loader
  cudaError_t e;
  switch (head_dim * kTypes + type) {  // the dispatch table: head size x cache type
    case 64 * kTypes + 0: e = go(launch_split<const float*, 64>, kf, vf); break;
    case 64 * kTypes + 1: e = go(launch_split<const __half*, 64>, kh, vh); break;
    case 64 * kTypes + 2: e = go(launch_split<KvQ8, 64>, k8, v8); break;
    case 64 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 64>, kb, vb); break;
    case 64 * kTypes + 4: e = go(launch_split<KvQ4, 64>, k4, v4); break;
    case 64 * kTypes + 5: e = go(launch_split<KvFp8, 64>, kp, vp); break;
    case 64 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 64>, ka, va); break;
    case 128 * kTypes + 0: e = go(launch_split<const float*, 128>, kf, vf); break;
    case 128 * kTypes + 1: e = go(launch_split<const __half*, 128>, kh, vh); break;
    case 128 * kTypes + 2: e = go(launch_split<KvQ8, 128>, k8, v8); break;
    case 128 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 128>, kb, vb); break;
    case 128 * kTypes + 4: e = go(launch_split<KvQ4, 128>, k4, v4); break;
    case 128 * kTypes + 5: e = go(launch_split<KvFp8, 128>, kp, vp); break;
    case 128 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 128>, ka, va); break;
    case 256 * kTypes + 0: e = go(launch_split<const float*, 256>, kf, vf); break;
    case 256 * kTypes + 1: e = go(launch_split<const __half*, 256>, kh, vh); break;
    case 256 * kTypes + 2: e = go(launch_split<KvQ8, 256>, k8, v8); break;
    case 256 * kTypes + 3: e = go(launch_split<const __nv_bfloat16*, 256>, kb, vb); break;
    case 256 * kTypes + 4: e = go(launch_split<KvQ4, 256>, k4, v4); break;
    case 256 * kTypes + 5: e = go(launch_split<KvFp8, 256>, kp, vp); break;
    case 256 * kTypes + kTypes - 1: e = go(launch_split<KvAny, 256>, ka, va); break;
    default: return cudaErrorInvalidValue;
  }
  // The merge kernel only where the grid holds more than kInlineMergeSplits splits, so some token
  // may see more: its launch is a boundary a layer even when every CTA exits at once (H200, Qwen3-8B
  // Q4_K_M at n_ctx 4,616 and a short history: 403.5 tok/s against 421-425 at n_ctx 520, round 13).
  // A bound below kFlashDecodeMergeFrom keeps the grid within kInlineMergeSplits splits.
  static_assert(int64_t{kInlineMergeSplits} * kSplit == kFlashDecodeMergeFrom, "flash.cuh's bound is this file's");
  if (e != cudaSuccess || grid_splits <= kInlineMergeSplits) return e;
  const dim3 merge_grid(static_cast<unsigned>(n_head), static_cast<unsigned>(n_tokens));
  if (head_dim == 128)
    return launch_pdl(merge_narrow_kernel, merge_grid, dim3(kNarrowThreads), 0, stream, out, part_o, part_ml, n_head,
                      n_splits, pos, window, out_ep);
  auto merge = head_dim == 64 ? merge_kernel<64> : merge_kernel<256>;
  return launch_pdl(merge, merge_grid, dim3(kThreads), 0, stream, out, part_o, part_ml, n_head, n_splits, pos, window,
                    out_ep);
}

}  // namespace bw24::cuda
