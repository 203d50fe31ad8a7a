// The router's softmax and top-k for one token, by one warp: moe_route's kernel and moe_gate's
// last CTA both call this, so their picks and weights are the same bits.
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

}  // namespace bw24::cuda
