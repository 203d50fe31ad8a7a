// Mixture-of-experts routing and combination (cuda/moe/moe.cuh).
//
// moe_route: one warp per token over n_expert logits (128 for Qwen3-30B-A3B, 512 for Qwen3-Next):
// softmax as a warp max and sum, then k rounds of a warp argmax. Latency, not bytes (n_expert
// floats).
// moe_group: one CTA of 1024 threads (thread e owns expert e): counts by shared atomics, a block
// scan of the counts and tile counts, then warp 0 places the pairs in order (__match_any_sync
// ranks the lanes of one expert): ~4k pairs per 512-token pass, a few us per layer.
// moe_combine: one thread per output column; reads k rows of expert outputs (k x 8 KB for a
// 2048-wide model), bandwidth-trivial.
#include <math.h>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/moe/moe.cuh"

namespace bw24::cuda {
namespace {

// (value, index) with the larger value winning, ties to the lower index.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }

// One warp per token, no barriers: lane l owns experts l, l + 32, ... (their exp(logit - max) in
// shared memory; only the owner reads or writes them, the rest goes through shuffles); k rounds
// of a warp argmax (5 shuffle steps each). Version 1 (256 threads, two barriers
// and a serial merge per round) took 7.7 us per Qwen3-30B-A3B layer (ncu).
__global__ void route_kernel(int32_t* ids, float* weights, const float* logits, int n_expert, int k, bool renormalize) {
  extern __shared__ float p[];  // [n_expert]
  pdl_begin();
  const float* row = logits + int64_t{blockIdx.x} * n_expert;
  const int lane = threadIdx.x;
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
      if (better(p[i], i, bv, bi)) bv = p[i], bi = i;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (better(ov, oi, bv, bi)) bv = ov, bi = oi;
    }
    if (lane == round) picked_p = bv * inv, picked_i = bi;
    total += bv * inv;
    if (lane == bi % 32) p[bi] = -1.0f;  // out of the next rounds (probabilities are >= 0)
  }
  if (lane < k) {
    ids[int64_t{blockIdx.x} * k + lane] = picked_i;
    weights[int64_t{blockIdx.x} * k + lane] = renormalize ? picked_p / total : picked_p;
  }
}

// Exclusive prefix sums of v over threads [0, 1024) of the CTA (scratch: 32 ints); *total the sum.
__device__ int block_exclusive_scan(int v, int* scratch, int* total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int incl = v;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const int u = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += u;
  }
  if (lane == 31) scratch[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    int w = scratch[lane];
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
      const int u = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += u;
    }
    scratch[lane] = w;  // inclusive over warps
  }
  __syncthreads();
  *total = scratch[31];
  return incl - v + (warp > 0 ? scratch[warp - 1] : 0);
}

__global__ void __launch_bounds__(1024) group_kernel(int32_t* sorted, int32_t* offsets, int32_t* tile_start, int2* tiles,
                                                     const int32_t* ids, int pairs, int n_expert, int tile_rows) {
  __shared__ int count[kMoeMaxExperts], cursor[kMoeMaxExperts], scan_a[32], scan_b[32];
  const int e = threadIdx.x;
  count[e] = 0;
  pdl_begin();
  __syncthreads();
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&count[ids[p]], 1);
  __syncthreads();
  const int n = e < n_expert ? count[e] : 0, nt = (n + tile_rows - 1) / tile_rows;
  int total_rows, total_tiles;
  const int row0 = block_exclusive_scan(n, scan_a, &total_rows);
  const int tile0 = block_exclusive_scan(nt, scan_b, &total_tiles);
  if (e < n_expert) {
    offsets[e] = row0;
    tile_start[e] = tile0;
    cursor[e] = row0;
    for (int i = 0; i < nt; ++i) tiles[tile0 + i] = make_int2(e, row0 + i * tile_rows);
  }
  if (e == 0) {
    offsets[n_expert] = total_rows;
    tile_start[n_expert] = total_tiles;
  }
  __syncthreads();
  if (threadIdx.x >= 32) return;
  const unsigned lt = (1u << threadIdx.x) - 1;
  for (int base = 0; base < pairs; base += 32) {
    const int p = base + threadIdx.x;
    const int id = p < pairs ? ids[p] : -1 - static_cast<int>(threadIdx.x);  // past the end: a key of its own
    const unsigned same = __match_any_sync(0xffffffffu, id);
    if (p < pairs) {
      const int pos = cursor[id] + __popc(same & lt);
      sorted[pos] = p;
    }
    __syncwarp();
    if (p < pairs && (same & lt) == 0) cursor[id] += __popc(same);  // the expert's first lane advances it
    __syncwarp();
  }
}

__global__ void combine_kernel(float* x, const float* expert_out, const float* weights, const float* shared_out,
                               const float* shared_gate, int k, int64_t width) {
  pdl_begin();
  const int64_t c = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  if (c >= width) return;
  float acc = x[int64_t{t} * width + c];
  // The k rows' loads issued together (a fixed-bound, predicated loop): a load, then the add that
  // waits for it, cost a round trip per expert (8 for Qwen3-30B-A3B, 6 us per layer, ncu).
  float part[kMoeMaxUsed];
#pragma unroll
  for (int j = 0; j < kMoeMaxUsed; ++j)
    part[j] = j < k ? weights[t * k + j] * expert_out[(int64_t{t} * k + j) * width + c] : 0.0f;
#pragma unroll
  for (int j = 0; j < kMoeMaxUsed; ++j)
    if (j < k) acc += part[j];
  if (shared_out) acc += shared_out[int64_t{t} * width + c] / (1.0f + expf(-shared_gate[t]));
  x[int64_t{t} * width + c] = acc;
}

}  // namespace

cudaError_t moe_route(int32_t* ids, float* weights, const float* logits, int n, int n_expert, int k, bool renormalize,
                      cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n_expert < 1 || n_expert > 8192 || k < 1 || k > kMoeMaxUsed || k > n_expert) return cudaErrorInvalidValue;
  return launch_pdl(route_kernel, dim3(static_cast<unsigned>(n)), dim3(32), size_t(n_expert) * 4, stream, ids, weights,
                    logits, n_expert, k, renormalize);
}

cudaError_t moe_group(int32_t* sorted, int32_t* offsets, int32_t* tile_start, int2* tiles, const int32_t* ids,
                      int pairs, int n_expert, int tile_rows, cudaStream_t stream) {
  if (n_expert < 1 || n_expert > kMoeMaxExperts || pairs < 0 || tile_rows < 1) return cudaErrorInvalidValue;
  return launch_pdl(group_kernel, dim3(1), dim3(kMoeMaxExperts), 0, stream, sorted, offsets, tile_start, tiles, ids,
                    pairs, n_expert, tile_rows);
}

cudaError_t moe_combine(float* x, const float* expert_out, const float* weights, const float* shared_out,
                        const float* shared_gate, int n, int k, int64_t width, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (k < 1 || width < 1 || (shared_out && !shared_gate)) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const dim3 grid(static_cast<unsigned>((width + kThreads - 1) / kThreads), static_cast<unsigned>(n));
  return launch_pdl(combine_kernel, grid, dim3(kThreads), 0, stream, x, expert_out, weights, shared_out, shared_gate,
                    k, width);
}

}  // namespace bw24::cuda
