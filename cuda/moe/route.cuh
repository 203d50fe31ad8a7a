// The router's softmax and top-k for one token, by one warp (warp_route): moe_route's kernel and
// moe_gate's last CTA both call this, so their picks and weights are the same bits; cta_route
// (below) gives the same bits with a whole CTA, for the cluster router's CTA 0.
//
// Lane l owns experts l, l + 32, ... (their exp(logit - max) in p; only the owner reads or writes
// them, the rest goes through shuffles); k rounds of a warp argmax (5 shuffle steps each); ties go
// to the lower expert id, as the CPU reference's partial_sort.
#pragma once

#include <math.h>

#include "cuda/common/check.cuh"

namespace bw24::cuda {

// (value, index) with the larger value winning, ties to the lower index.
__device__ __forceinline__ bool route_better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }

// Lane j < k gets pick j: its expert (*id) and weight (*w: p, divided by the sum of the k picks'
// p when renormalize). row: the token's n_expert logits; p: [n_expert] floats of shared memory
// (p may be row itself: each lane reads an entry before it overwrites it).
__device__ __forceinline__ void warp_route(const float* row, float* p, int n_expert, int k, bool renormalize, int lane,
                                           int* id, float* w) {
  float mx = -INFINITY;
  for (int i = lane; i < n_expert; i += 32) mx = fmaxf(mx, row[i]);
  mx = warp_max(mx);
  float sum = 0;
  for (int i = lane; i < n_expert; i += 32) {
    const float e = expf(row[i] - mx);
    p[i] = e;
    sum += e;
  }
  const float inv = 1.0f / warp_sum(sum);
  float picked_p = 0, total = 0;  // lane j keeps round j's pick
  int picked_i = 0;
  for (int round = 0; round < k; ++round) {
    float bv = -1.0f;
    int bi = n_expert;
    for (int i = lane; i < n_expert; i += 32)
      if (route_better(p[i], i, bv, bi)) bv = p[i], bi = i;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (route_better(ov, oi, bv, bi)) bv = ov, bi = oi;
    }
    if (lane == round) picked_p = bv * inv, picked_i = bi;
    total += bv * inv;
    if (lane == bi % 32) p[bi] = -1.0f;  // out of the next rounds (probabilities are >= 0)
  }
  *id = picked_i;
  *w = renormalize ? picked_p / total : picked_p;
}

// The picks and weights of warp_route, the same bits, with every thread of a CTA of kThreads: for
// the cluster router's CTA 0, where warp_route's k rounds of a warp argmax (each 5 dependent
// shuffle pairs) were the longest part of the launch (H200 stamps, round 40: 4,341 cycles of ~9,000
// after the wait at 128 experts, 5,255 at 256). Here the rounds become two rank counts:
//   1. every warp finds the max as warp_route does (a max is exact in any order); thread e < n
//      writes p[e] = exp(logit - max);
//   2. a group of 32 experts ranks its own: thread e counts the group's experts that beat it
//      (route_better: larger p, ties to the lower id); the group's best k are candidates;
//   3. a candidate's rank among all candidates is its rank among all experts when it is one of the
//      best k (every expert that beats it is then one of the best k, so a candidate of its group),
//      and is >= k otherwise; the best k fill slot[rank];
//   4. warp 0 sums p in warp_route's order (a lane's experts in turn, then the warp tree) and sums
//      the picks in pick order, as warp_route does: the same weights to the bit.
// A NaN p ranks as -1 (after every number, by id), so every slot gets an expert in range; its weight
// is NaN as warp_route's sum is (warp_route leaves such a slot at id n_expert).
// A thread makes 32 compares in step 2 and kCands^2 / kThreads in step 3 (4 at 128 experts, 16 at
// 256), where warp_route makes k rounds of 4 (8) loads and 10 dependent shuffles on one warp.
// s: shared memory, CtaRouteSmem<kExperts>.
constexpr int kCtaRouteMaxK = 8;
template <int kExperts>
struct CtaRouteSmem {
  static constexpr int kGroups = kExperts / 32, kCands = kGroups * kCtaRouteMaxK;
  float p[kExperts], key[kExperts], cand_key[kCands];
  int cand_id[kCands], slot[kCtaRouteMaxK];
};
template <int kExperts, int kThreads>
__device__ __forceinline__ void cta_route(const float* row, CtaRouteSmem<kExperts>& s, int k, bool renormalize,
                                          int32_t* ids, float* weights) {
  using S = CtaRouteSmem<kExperts>;
  static_assert(kExperts % 32 == 0 && kExperts <= kThreads && kThreads % S::kCands == 0, "a thread an expert");
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, group = t / 32;
  constexpr int kPerLane = kExperts / 32;
  float mx = -INFINITY;  // a lane's logits loaded at once (a run-time loop had them one after the other)
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) mx = fmaxf(mx, row[lane + 32 * j]);
  mx = warp_max(mx);
  float key = 0.0f;
  if (t < kExperts) {
    const float pe = expf(row[t] - mx);
    key = pe == pe ? pe : -1.0f;
    s.p[t] = pe;
    s.key[t] = key;
  }
  __syncthreads();
  if (t < kExperts) {
    const float* g = s.key + group * 32;
    int c = 0;
#pragma unroll
    for (int j = 0; j < 32; ++j) c += route_better(g[j], group * 32 + j, key, t);
    if (c < kCtaRouteMaxK) {  // slots c >= k hold a key below every expert's, never picked
      s.cand_key[group * kCtaRouteMaxK + c] = c < k ? key : -2.0f;
      s.cand_id[group * kCtaRouteMaxK + c] = t;
    }
  }
  __syncthreads();
  {
    constexpr int kSplit = kThreads / S::kCands, kPer = S::kCands / kSplit;  // threads a candidate, compares each
    const int ci = t / kSplit, part = t % kSplit;
    const float me = s.cand_key[ci];
    const int mi = s.cand_id[ci];
    int c = 0;
#pragma unroll
    for (int j = part * kPer; j < (part + 1) * kPer; ++j) c += route_better(s.cand_key[j], s.cand_id[j], me, mi);
#pragma unroll
    for (int o = kSplit / 2; o > 0; o /= 2) c += __shfl_xor_sync(0xffffffffu, c, o);
    if (part == 0 && me > -2.0f && c < k) s.slot[c] = mi;
  }
  __syncthreads();
  if (group == 0) {
    // Every load first (the slots, then their p), then the sums in warp_route's order.
    float pl[kPerLane];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) pl[j] = s.p[lane + 32 * j];
    int id[kCtaRouteMaxK];
    float bv[kCtaRouteMaxK];
#pragma unroll
    for (int r = 0; r < kCtaRouteMaxK; ++r) id[r] = r < k ? s.slot[r] : 0;
#pragma unroll
    for (int r = 0; r < kCtaRouteMaxK; ++r) bv[r] = s.p[id[r]];
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) sum += pl[j];
    const float inv = 1.0f / warp_sum(sum);
    float picked_p = 0, total = 0;
    int picked_i = 0;
#pragma unroll
    for (int r = 0; r < kCtaRouteMaxK; ++r) {
      if (r < k) {
        if (lane == r) picked_p = bv[r] * inv, picked_i = id[r];
        total += bv[r] * inv;
      }
    }
    if (lane < k) {
      ids[lane] = picked_i;
      weights[lane] = renormalize ? picked_p / total : picked_p;
    }
  }
}

}  // namespace bw24::cuda
