// Mixture-of-experts routing and combination (cuda/moe/moe.cuh).
//
// moe_route: one warp per token over n_expert logits (128 for Qwen3-30B-A3B, 512 for Qwen3-Next):
// softmax as a warp max and sum, then k rounds of a warp argmax. Latency, not bytes (n_expert
// floats).
// moe_gate: the router product with a CTA per expert row, the last CTA routing (see gate_kernel).
// moe_group: one CTA of 1024 threads (thread e owns expert e): counts by shared atomics, a block
// scan of the counts and tile counts, then warp 0 places the pairs in order (__match_any_sync
// ranks the lanes of one expert): ~4k pairs per 512-token pass, a few us per layer.
// moe_combine: one thread per output column; reads k rows of expert outputs (k x 8 KB for a
// 2048-wide model), bandwidth-trivial. Decode on int8-path experts skips it: the routed down GEMV
// combines in its epilogue (gemv_q8_combine, the same moe_combine_value).
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <math.h>

#include <atomic>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/float_rows.cuh"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/moe/combine.cuh"
#include "cuda/moe/moe.cuh"
#include "cuda/moe/route.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/norm/row_rms.cuh"

namespace bw24::cuda {
namespace {

// One warp per token, no barriers (route.cuh). Version 1 (256 threads, two barriers and a serial
// merge per round) took 7.7 us per Qwen3-30B-A3B layer (ncu).
__global__ void route_kernel(int32_t* ids, float* weights, const float* logits, int n_expert, int k, bool renormalize) {
  extern __shared__ float p[];  // [n_expert]
  pdl_begin();
  int id;
  float w;
  warp_route(logits + int64_t{blockIdx.x} * n_expert, p, n_expert, k, renormalize, threadIdx.x, &id, &w);
  if (threadIdx.x < k) {
    ids[int64_t{blockIdx.x} * k + threadIdx.x] = id;
    weights[int64_t{blockIdx.x} * k + threadIdx.x] = w;
  }
}

// The router product and the routing in one launch (decode, up to kMoeGateMaxTokens tokens): a CTA
// per expert row, its 8 warps over the columns (a Qwen3-30B-A3B router row is 2048 F32 = 8 KB: two
// 16-byte loads per lane, one DRAM round trip, against four in a row for a warp per row; ncu: the
// warp-per-row GEMV took 6.8 us for the 1 MB router on its 16 CTAs, and moe_route 4.6 us more).
// The warps' sums meet in shared memory in a fixed order, so a logit does not depend on timing.
// Each CTA stores its logits, fences, and counts itself in *counter; the last one reads every
// logit back from L2 and routes each token with a warp (route.cuh), then sets the counter back
// to zero for the next launch.
// The MoE block's rmsnorm_q8 folded into this launch (each of its 128 CTAs normalizing the residual
// row after the wait; round 11, f33f255) measured slower: Qwen3-30B-A3B 382.9 -> 376.6,
// Qwen3.6-35B-A3B 374.9 -> 369.1 (docs/performance.md). The cluster router below takes it (round 38).
constexpr int kGateThreads = 256, kGateWarps = kGateThreads / 32;

template <uint32_t kType, int nt>
__global__ void __launch_bounds__(kGateThreads) gate_kernel(int32_t* ids, float* weights, float* logits,
                                                            unsigned* counter, const uint8_t* w,
                                                            const float* __restrict__ x, int n_expert, int cols, int k,
                                                            bool renormalize) {
  constexpr int kElemBytes = kType == kF32 ? 4 : 2, kPer = 16 / kElemBytes, kStep = kGateThreads * kPer;
  constexpr int kDepth = 4;  // 16-byte loads in flight per thread
  const int e = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint8_t* row = w + int64_t{e} * cols * kElemBytes;
  pdl_trigger();
  // The router row depends on nothing: its first kDepth loads a thread go out before the wait, into
  // registers (the whole row where cols <= kStep kDepth: 4096 F32, 8192 F16 / BF16, so every router
  // of Qwen3-30B-A3B and Qwen3.6-35B-A3B), and the rest only into L2; after the wait the products
  // start at once, not after an L2 round trip. H200 tg128 `-p 16 -r 3`, three rounds (next197):
  // Qwen3-30B-A3B 549.1 / 552.6 / 550.1 -> 556.0 / 553.5 / 553.2 (+0.65 %), Qwen3.6-35B-A3B (one
  // round) 515.0 -> 514.0.
  uint4 vs[kDepth];
  auto load_run = [&](int c0) {
#pragma unroll
    for (int u = 0; u < kDepth; ++u)
      if (c0 + kStep * u < cols)
        vs[u] = __ldg(reinterpret_cast<const uint4*>(row + int64_t{c0 + kStep * u} * kElemBytes));
  };
  const int first = threadIdx.x * kPer;
  load_run(first);
  if (warp == 0 && cols > kStep * kDepth) prefetch_l2(row, int64_t{cols} * kElemBytes, lane);
  pdl_wait();
  float acc[nt] = {};
  for (int c0 = first; c0 < cols; c0 += kStep * kDepth) {
    if (c0 != first) load_run(c0);
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const int c = c0 + kStep * u;
      if (c >= cols) break;
      float wf[kPer];
      widen16<kElemBytes, kType == kBF16>(vs[u], wf);
      dot_tokens<kPer, nt>(wf, x, cols, c, acc);
    }
  }
  __shared__ float red[kGateWarps][nt];
  __shared__ bool last;
  warp_sum_each(acc);  // the tokens' trees side by side
  if (lane == 0)
#pragma unroll
    for (int t = 0; t < nt; ++t) red[warp][t] = acc[t];
  __syncthreads();
  if (threadIdx.x < nt) {
    float v = 0;
#pragma unroll
    for (int i = 0; i < kGateWarps; ++i) v += red[i][threadIdx.x];
    logits[int64_t{threadIdx.x} * n_expert + e] = v;
    __threadfence();  // the logit before the count
  }
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  extern __shared__ float p[];  // [nt][n_expert]: the logits, then (in place) the probabilities
  for (int i = threadIdx.x; i < nt * n_expert; i += kGateThreads) p[i] = __ldcg(logits + i);
  __syncthreads();
  if (warp < nt) {
    int id;
    float wt;
    float* pt = p + warp * n_expert;
    warp_route(pt, pt, n_expert, k, renormalize, lane, &id, &wt);
    if (lane < k) {
      ids[warp * k + lane] = id;
      weights[warp * k + lane] = wt;
    }
  }
  if (threadIdx.x == 0) *counter = 0;
}

// The router of one token as one cluster of kGateClusterCtas CTAs (sm_90): CTA r takes expert
// rows [r kRows, (r + 1) kRows), bulk-copied into its shared memory before the PDL wait (64 KB for
// 8 rows of 2,048 F32, the 30B's; 128 KB for 16, the 35B's; a thread reads its kLoads 16-byte pieces
// of each row from there). After the wait the products are gate_kernel's, thread for thread and in
// its order (the same bits); each CTA writes its logits into CTA 0's shared memory, and one cluster
// barrier replaces gate_kernel's handoff (a fence, an L2 atomic and the last CTA's L2 reads of every logit: three L2
// round trips on the step's critical path, ~6 us a Qwen3-30B-A3B layer with the wait, next189).
// Round 25's cluster router (16 CTAs reading the rows after the wait) lost 3.8 % on Qwen3.6-35B-A3B;
// here the rows are in shared memory at the wait, as gate_kernel's one row a CTA is in registers
// since round 33. H200, tg128 `-p 16 -r 3`, one binary, two rounds (next205): Qwen3-30B-A3B 560.3 /
// 560.2 -> 568.4 / 566.4 (+1.3 %), at depth 4096 463.9 -> 472.2; Qwen3.6-35B-A3B 515.6 / 516.1 ->
// 517.3 / 517.9 (its 128 KB CTAs find room later beside the previous launches' stages).
constexpr int kGateClusterCtas = 16;
// A CTA's rows in shared memory: kRows F32 rows of kGateThreads x 4 x kLoads columns (the kernel's
// bulk copies and the launch's dynamic shared memory).
template <int kRows, int kLoads>
constexpr uint32_t kGateClusterBytes = uint32_t{kRows} * (kGateThreads * 4 * kLoads) * 4;
// kNorm: x is the residual and the launch is also the MoE block's rmsnorm_q8 (MoeGateNorm). Every
// CTA loads the whole row anyway (a thread its 8 columns), so each sums the squares itself in
// row_inv_rms's order (row_rms.cuh: a thread's float4 at t and t + 256, then the CTA's sum) and
// normalizes as rmsnorm_q8 does, (x inv) w: the router's products see the bits the separate norm
// wrote. After the logits are in, CTA r writes slice (r + 1) % 16 of the normed row (128 columns,
// one warp's, f32 and int8, store_act_q8x4) while CTA 0's warp 0 routes (slice 1 is warp 1's).
// The norm's launch and its boundary go; the cluster now starts beside the O projection instead of
// the norm, so its row copies are on the path (trace: lead 0.5 us, was 2.4; the norm's 1.9 us and
// the router's 4.5 became 6.2). H200, tg128 `-p 16 -r 3`, one binary, two rounds (next221):
// Qwen3-30B-A3B 584.0 / 586.5 -> 594.0 / 597.3 (+1.8 %), at depth 4096 483.3 -> 488.2;
// Qwen3.6-35B-A3B 528.9 / 532.0 -> 537.1 / 535.7 (+1.0 %).
// Round 40's stamps of the 30B's launch (~9,000 cycles after the wait): warp 0 of CTA 0 routing with
// warp_route 4,341 cycles, the products with their warp trees one row after the other 1,909, the
// cluster barrier 1,275. Now the trees run side by side (warp_sum_each) and CTA 0 routes with all its
// threads (cta_route, route.cuh: two rank counts; warp_route's picks and weights to the bit, the
// kernel check's tie rows included). Trace: the launch's segment 5.61 -> 4.44 us (30B), 7.59 -> 6.23
// (35B). H200, tg128 `-p 16 -r 2`, two rounds (next233): Qwen3-30B-A3B 607.5 / 603.9 -> 627.6 / 628.4
// (+3.7 %), at depth 4096 496.3 -> 509.9; Qwen3.6-35B-A3B 548.5 / 545.1 -> 562.0 / 567.3 (+3.0 %).
// one_way: each CTA's logits go into CTA 0's shared memory by st.async, counted in bytes on CTA 0's
// mbarrier logits_in, and CTA 0 alone waits there; the cluster barrier after the handoff goes (every
// CTA waited for the slowest, then CTA 0 routed). CTA 0 then routes before it writes its own slice
// of the normed row; the others write theirs and leave. Stamps (timing build, next235): the handoff
// 1,311 -> 348 cycles (30B), 1,167 -> 393 (35B). With cta_route's loads issued at once (route.cuh),
// H200 tg128 `-p 16 -r 2` (next240, one binary): Qwen3-30B-A3B 622.2 with the barrier -> 642.7 one
// way (main 626.5 / 628.1), Qwen3.6-35B-A3B 562.8 -> 570.3 (main 562.4 / 560.1); against main's bench,
// alternated, two rounds (next242): 629.7 / 630.0 -> 647.2 / 645.6 (+2.6 %), 563.2 / 562.3 -> 573.9 /
// 574.1 (+2.0 %).
template <int kRows, int kLoads, bool kNorm>
__global__ void __launch_bounds__(kGateThreads) gate_cluster_kernel(int32_t* ids, float* weights, float* logits,
                                                                    const uint8_t* w, const float* __restrict__ x, int k,
                                                                    bool renormalize, MoeGateNorm nm, bool one_way) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int kElemBytes = 4, kPer = 16 / kElemBytes, kStep = kGateThreads * kPer;  // F32 rows
  constexpr int kCols = kStep * kLoads, kExperts = kRows * kGateClusterCtas;
  constexpr uint32_t kBytes = kGateClusterBytes<kRows, kLoads>, kCopy = 16 * 1024;
  static_assert(kBytes == uint32_t{kRows} * kCols * kElemBytes, "the rows' bytes, as the launch allows them");
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank()), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first = threadIdx.x * kPer;
  const uint8_t* rows = w + int64_t{rank} * kBytes;  // this CTA's kRows rows, contiguous
  extern __shared__ __align__(128) uint8_t row_smem[];  // the rows
  __shared__ uint64_t landed, logits_in;  // logits_in: CTA 0's, every logit landed (one_way)
  pdl_trigger();
  // The rows depend on nothing: bulk copies into shared memory before the wait. (Loads into
  // registers there, as gate_kernel's, were moved after the wait by ptxas, which spent fewer
  // registers that way; from L2 after the wait it interleaved them with the products, several
  // round trips. The copy engine's instructions stay where they are written: SASS, sm_90a.)
  if (threadIdx.x == 0) {
    mbar_init(&landed, 1);
    if (one_way && rank == 0) mbar_init(&logits_in, 1);
    mbar_init_fence();  // before the cluster arrival below: the other CTAs' st.async come after its wait
    mbar_arrive_expect_tx(&landed, kBytes);
    if (one_way && rank == 0) mbar_arrive_expect_tx(&logits_in, kExperts * 4);
    const uint64_t policy = l2_evict_first_policy();
    for (uint32_t off = 0; off < kBytes; off += kCopy)
      bulk_copy_g2s(row_smem + off, rows + off, min(kCopy, kBytes - off), &landed, policy);
  }
  __syncthreads();  // the barrier's initialisation, before any thread waits on it
  // Every CTA of the cluster has started before one writes into CTA 0's shared memory: the arrival
  // here, the wait before that write (long satisfied by then).
  cluster_arrive_relaxed();
  static_assert(kPer == 4 && kGateThreads == kRowRmsThreads, "a thread's columns of a load: one float4");
  float4 norm_w[kLoads];  // the norm's weight at the thread's columns (no kernel writes it: before the wait)
  if constexpr (kNorm) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(nm.w + first + kStep * u));
      norm_w[u] = nm.one_plus ? make_float4(1.0f + v.x, 1.0f + v.y, 1.0f + v.z, 1.0f + v.w) : v;
    }
  }
  pdl_wait();
  float4 xs[kLoads][kPer / 4];
#pragma unroll
  for (int u = 0; u < kLoads; ++u)
#pragma unroll
    for (int k4 = 0; k4 < kPer / 4; ++k4) xs[u][k4] = __ldg(reinterpret_cast<const float4*>(x + first + kStep * u) + k4);
  if constexpr (kNorm) {
    float ss = 0.0f;
#pragma unroll
    for (int u = 0; u < kLoads; ++u) ss += sum_sq4(xs[u][0]);
    const float inv = block_inv_rms(ss, kCols, nm.eps);
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const float4 v = xs[u][0], g = norm_w[u];
      xs[u][0] = make_float4(v.x * inv * g.x, v.y * inv * g.y, v.z * inv * g.z, v.w * inv * g.w);
    }
  }
  mbar_wait(&landed, 0);
  __shared__ float red[kGateWarps][kRows];
  __shared__ float all[kExperts];  // CTA 0's: every logit (cta_route keeps the probabilities apart)
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    acc[r] = 0.0f;  // dot_tokens' arithmetic, for one token
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int64_t at = (int64_t{r} * kCols + first + kStep * u) * kElemBytes;
      const uint4 v = *reinterpret_cast<const uint4*>(row_smem + at);
      float wf[kPer];
      widen16<kElemBytes, false>(v, wf);  // F32 (moe_gate takes no other router here)
#pragma unroll
      for (int k4 = 0; k4 < kPer / 4; ++k4) {
        const float4 xa = xs[u][k4];
        acc[r] += wf[4 * k4] * xa.x + wf[4 * k4 + 1] * xa.y + wf[4 * k4 + 2] * xa.z + wf[4 * k4 + 3] * xa.w;
      }
    }
  }
  warp_sum_each(acc);  // the rows' trees side by side (products + trees: 1,909 cycles for 8 rows, 3,955 for 16, before)
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kRows; ++r) red[warp][r] = acc[r];
  __syncthreads();
  cluster_wait();
  if (threadIdx.x < kRows) {
    float v = 0;
#pragma unroll
    for (int i = 0; i < kGateWarps; ++i) v += red[i][threadIdx.x];
    const int e = rank * kRows + static_cast<int>(threadIdx.x);
    logits[e] = v;
    if (one_way)
      st_async_cluster(&all[e], v, &logits_in, 0);
    else
      *cluster.map_shared_rank(&all[e], 0) = v;
  }
  if (!one_way)
    cluster.sync();  // every logit in CTA 0's shared memory
  else if (rank == 0)
    mbar_wait_cluster(&logits_in, 0);
  // CTA 0 routes first (its slice's warp leaves cta_route after the last CTA barrier, while warp 0
  // sums the picks); the others write their slice at once.
  __shared__ CtaRouteSmem<kExperts> route_smem;
  if (rank == 0) cta_route<kExperts, kGateThreads>(all, route_smem, k, renormalize, ids, weights);
  if constexpr (kNorm) {
    constexpr int kSlice = kCols / kGateClusterCtas;  // 128 columns: one warp's float4s of one load
    static_assert(kSlice == 32 * kPer && kStep % kSlice == 0, "a slice is one warp's columns of one load");
    const int slice = (rank + 1) % kGateClusterCtas, owner = slice % (kStep / kSlice);
    static_assert(kLoads == 2, "the slice's load: the first or the second");
    if (warp == owner) {
      // A select per component: indexing xs by a run-time load put it in local memory (ptxas).
      const bool second = slice >= kStep / kSlice;
      const float4 a = xs[0][0], b = xs[1][0];
      const float4 v = make_float4(second ? b.x : a.x, second ? b.y : a.y, second ? b.z : a.z, second ? b.w : a.w);
      const int c = slice * kSlice + kPer * lane;  // == first + kStep * u
      *reinterpret_cast<float4*>(nm.y + c) = v;
      store_act_q8x4(v, nm.q + c, nm.ds + c / 32);
    }
  }
#endif
}

std::atomic<int> g_gate_cluster{-1};  // -1: not yet read from BW24_GATE_CLUSTER (0: off; on by default)
std::atomic<long> g_gate_cluster_launches{0};
std::atomic<int> g_gate_one_way{-1};  // -1: not yet read from BW24_GATE_ONE_WAY (0: off; on by default)
std::atomic<int> g_gate_norm{-1};  // -1: not yet read from BW24_GATE_NORM (0: off; on by default)
std::atomic<long> g_gate_norm_launches{0};
std::atomic<int> g_gate_room{-1};  // -1: not yet read from BW24_ROUTER_ROOM (0: off; on by default)

template <int kRows, bool kNorm>
cudaError_t launch_gate_cluster(int32_t* ids, float* weights, float* logits, const void* w, const float* x, int k,
                                bool renormalize, const MoeGateNorm& nm, cudaStream_t stream, bool* taken) {
  constexpr int kLoads = 2;
  static_assert(kGateThreads * 4 * kLoads == 2048, "2,048-wide rows: moe_gate's condition for the cluster");
  constexpr auto kernel = gate_cluster_kernel<kRows, kLoads, kNorm>;
  constexpr size_t smem = kGateClusterBytes<kRows, kLoads>;  // the CTA's rows: 64 KB (8), 128 KB (16)
  BW24_CUDA_TRY(allow_smem<kernel>(smem));
  // 16 CTAs a cluster is past the portable 8: where the cluster does not fit, gate_kernel runs.
  if (!cluster_fits<kernel>(dim3(kGateThreads), kGateClusterCtas, smem)) return cudaSuccess;
  *taken = true;
  g_gate_cluster_launches.fetch_add(1, std::memory_order_relaxed);
  if (kNorm) g_gate_norm_launches.fetch_add(1, std::memory_order_relaxed);
  return launch_pdl_cluster(kernel, dim3(kGateClusterCtas), dim3(kGateThreads), kGateClusterCtas, smem, stream, ids,
                            weights, logits, static_cast<const uint8_t*>(w), x, k, renormalize, nm,
                            moe_gate_one_way());
}

// The cluster router for its expert count (8 or 16 rows a CTA); any other count leaves *taken false.
template <bool kNorm>
cudaError_t launch_gate_cluster_rows(int32_t* ids, float* weights, float* logits, const void* w, const float* x,
                                     int n_expert, int k, bool renormalize, const MoeGateNorm& nm, cudaStream_t stream,
                                     bool* taken) {
  if (n_expert == 8 * kGateClusterCtas)
    return launch_gate_cluster<8, kNorm>(ids, weights, logits, w, x, k, renormalize, nm, stream, taken);
  if (n_expert == 16 * kGateClusterCtas)
    return launch_gate_cluster<16, kNorm>(ids, weights, logits, w, x, k, renormalize, nm, stream, taken);
  return cudaSuccess;
}

template <uint32_t kType, int nt>
cudaError_t launch_gate(int32_t* ids, float* weights, float* logits, unsigned* counter, const void* w,
                        const float* x, int n_expert, int cols, int k, bool renormalize, cudaStream_t stream) {
  return launch_pdl(gate_kernel<kType, nt>, dim3(static_cast<unsigned>(n_expert)), dim3(kGateThreads),
                    size_t(nt) * n_expert * 4, stream, ids, weights, logits, counter, static_cast<const uint8_t*>(w), x,
                    n_expert, cols, k, renormalize);
}

template <uint32_t kType>
cudaError_t launch_gate_nt(int n, int32_t* ids, float* weights, float* logits, unsigned* counter, const void* w,
                           const float* x, int n_expert, int cols, int k, bool renormalize, cudaStream_t stream) {
  // The token count is a template parameter: with a run-time count the accumulators went to local memory.
  switch (n) {
    case 1: return launch_gate<kType, 1>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 2: return launch_gate<kType, 2>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 3: return launch_gate<kType, 3>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 4: return launch_gate<kType, 4>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 5: return launch_gate<kType, 5>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 6: return launch_gate<kType, 6>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    case 7: return launch_gate<kType, 7>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
    default: return launch_gate<kType, 8>(ids, weights, logits, counter, w, x, n_expert, cols, k, renormalize, stream);
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

// kGroupSegs warps place the pairs, each a contiguous segment of them in order, from per-segment
// expert cursors: the order stays the pair order (deterministic), and the placement, a chain of
// dependent shared-memory and ballot steps a 32 pairs, runs 8 chains at once. One warp over all
// pairs took ~35 us a launch for Qwen3-30B-A3B's 4096 pairs (ncu, 718253f: 1.7 ms of a pp512 pass).
// Shared: the counts, then the cursors, of each segment and expert (32 KB).
constexpr int kGroupSegs = 8;
__global__ void __launch_bounds__(1024) group_kernel(int32_t* sorted, int32_t* offsets, int32_t* tile_start, int2* tiles,
                                                     const int32_t* ids, int pairs, int n_expert, int tile_rows) {
  __shared__ int seg[kGroupSegs][kMoeMaxExperts], scan_a[32], scan_b[32];
  const int e = threadIdx.x;
#pragma unroll
  for (int sg = 0; sg < kGroupSegs; ++sg) seg[sg][e] = 0;
  pdl_begin();
  __syncthreads();
  const int per = (pairs + kGroupSegs - 1) / kGroupSegs;  // pairs a segment (the last may have fewer)
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&seg[p / per][ids[p]], 1);
  __syncthreads();
  int n = 0;
  if (e < n_expert)
#pragma unroll
    for (int sg = 0; sg < kGroupSegs; ++sg) n += seg[sg][e];
  const int nt = (n + tile_rows - 1) / tile_rows;
  int total_rows, total_tiles;
  const int row0 = block_exclusive_scan(n, scan_a, &total_rows);
  const int tile0 = block_exclusive_scan(nt, scan_b, &total_tiles);
  if (e < n_expert) {
    offsets[e] = row0;
    tile_start[e] = tile0;
    for (int i = 0; i < nt; ++i) tiles[tile0 + i] = make_int2(e, row0 + i * tile_rows);
    int cursor = row0;  // segment sg's pairs of expert e start after the earlier segments'
#pragma unroll
    for (int sg = 0; sg < kGroupSegs; ++sg) {
      const int c = seg[sg][e];
      seg[sg][e] = cursor;
      cursor += c;
    }
  }
  if (e == 0) {
    offsets[n_expert] = total_rows;
    tile_start[n_expert] = total_tiles;
  }
  __syncthreads();
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (w >= kGroupSegs) return;
  int* cursor = seg[w];
  const unsigned lt = (1u << lane) - 1;
  const int lo = w * per, hi = min(pairs, lo + per);
  for (int base = lo; base < hi; base += 32) {
    const int p = base + lane;
    const int id = p < hi ? ids[p] : -1 - lane;  // past the end: a key of its own
    const unsigned same = __match_any_sync(0xffffffffu, id);
    if (p < hi) sorted[cursor[id] + __popc(same & lt)] = p;
    __syncwarp();
    if (p < hi && (same & lt) == 0) cursor[id] += __popc(same);  // the expert's first lane advances it
    __syncwarp();
  }
}

__global__ void combine_kernel(float* x, const float* expert_out, const float* weights, const float* shared_out,
                               const float* shared_gate, int k, int64_t width) {
  pdl_begin();
  const int64_t c = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  if (c >= width) return;
  const int64_t i = int64_t{t} * width + c;
  x[i] = moe_combine_value(
      x[i], weights + t * k, [&](int j) { return expert_out[(int64_t{t} * k + j) * width + c]; }, k,
      shared_out ? shared_out + i : nullptr, shared_out ? shared_gate[t] : 0.0f);
}

}  // namespace

cudaError_t moe_route(int32_t* ids, float* weights, const float* logits, int n, int n_expert, int k, bool renormalize,
                      cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n_expert < 1 || n_expert > 8192 || k < 1 || k > kMoeMaxUsed || k > n_expert) return cudaErrorInvalidValue;
  return launch_pdl(route_kernel, dim3(static_cast<unsigned>(n)), dim3(32), size_t(n_expert) * 4, stream, ids, weights,
                    logits, n_expert, k, renormalize);
}

bool moe_gate_cluster() { return env_switch(g_gate_cluster, "BW24_GATE_CLUSTER"); }
void moe_gate_set_cluster(bool on) { g_gate_cluster.store(on ? 1 : 0, std::memory_order_relaxed); }
long moe_gate_cluster_launches() { return g_gate_cluster_launches.load(std::memory_order_relaxed); }
bool moe_gate_one_way() { return env_switch(g_gate_one_way, "BW24_GATE_ONE_WAY"); }
void moe_gate_set_one_way(bool on) { g_gate_one_way.store(on ? 1 : 0, std::memory_order_relaxed); }
bool moe_gate_norm_fused() { return env_switch(g_gate_norm, "BW24_GATE_NORM"); }
void moe_gate_set_norm_fused(bool on) { g_gate_norm.store(on ? 1 : 0, std::memory_order_relaxed); }
long moe_gate_norm_launches() { return g_gate_norm_launches.load(std::memory_order_relaxed); }

bool moe_gate_supports(const void* w, uint32_t type, int n, int n_expert, int64_t cols) {
  const int per = type == kF32 ? 4 : 8;
  const bool float_type = type == kF32 || type == kF16 || type == kBF16;
  return reinterpret_cast<uintptr_t>(w) % 16 == 0 && float_type && n >= 1 && n <= kMoeGateMaxTokens &&
         n_expert >= 1 && n_expert <= kMoeMaxExperts && cols > 0 && cols <= (int64_t{1} << 30) && cols % per == 0;
}

namespace {
// Whether moe_gate takes the cluster router (gate_cluster_kernel) for these arguments.
bool takes_cluster(uint32_t type, int n, int64_t cols, int k) {
  return n == 1 && type == kF32 && cols == 2048 && k >= 1 && k <= kCtaRouteMaxK && moe_gate_cluster() &&
         wgmma_supported() && pdl_supported();
}

template <int kRows>
cudaError_t gate_cluster_room(bool norm, CtaRoom* room) {
  constexpr size_t smem = kGateClusterBytes<kRows, 2>;
  return norm ? cta_room<gate_cluster_kernel<kRows, 2, true>>(kGateThreads, smem, room)
              : cta_room<gate_cluster_kernel<kRows, 2, false>>(kGateThreads, smem, room);
}
}  // namespace

cudaError_t moe_gate_room(uint32_t type, int n, int n_expert, int64_t cols, int k, bool norm, CtaRoom* room) {
  *room = {};
  if (!takes_cluster(type, n, cols, k) || !env_switch(g_gate_room, "BW24_ROUTER_ROOM")) return cudaSuccess;
  const bool fused = norm && moe_gate_norm_fused();
  if (n_expert == 8 * kGateClusterCtas) return gate_cluster_room<8>(fused, room);
  if (n_expert == 16 * kGateClusterCtas) return gate_cluster_room<16>(fused, room);
  return cudaSuccess;
}

cudaError_t moe_gate(int32_t* ids, float* weights, float* logits, unsigned* counter, const void* w, uint32_t type,
                     const float* x, int n, int n_expert, int64_t cols, int k, bool renormalize, cudaStream_t stream,
                     const MoeGateNorm* norm) {
  if (!moe_gate_supports(w, type, n, n_expert, cols) || k < 1 || k > kMoeMaxUsed || k > n_expert || !counter ||
      reinterpret_cast<uintptr_t>(x) % 16 != 0)
    return cudaErrorInvalidValue;
  if (norm && (!norm->w || !norm->y || !norm->q || !norm->ds || cols % 32 != 0))
    return cudaErrorInvalidValue;
  const int c = static_cast<int>(cols);
  const bool cluster = takes_cluster(type, n, cols, k);
  // The fused kernel's vector accesses: the weight and y as float4, q four codes at a time, ds float2.
  const bool aligned = norm && reinterpret_cast<uintptr_t>(norm->w) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(norm->y) % 16 == 0 && reinterpret_cast<uintptr_t>(norm->q) % 4 == 0 &&
                       reinterpret_cast<uintptr_t>(norm->ds) % 8 == 0;
  if (cluster && aligned && moe_gate_norm_fused()) {
    bool taken = false;
    const cudaError_t e = launch_gate_cluster_rows<true>(ids, weights, logits, w, x, n_expert, k, renormalize, *norm,
                                                         stream, &taken);
    if (taken || e != cudaSuccess) return e;
  }
  if (norm) {  // the norm as its own launch, the router reading its output
    BW24_CUDA_TRY(rmsnorm_q8(norm->y, norm->q, norm->ds, x, norm->w, n, c, norm->eps, norm->one_plus, stream));
    x = norm->y;
  }
  if (cluster) {
    bool taken = false;
    const cudaError_t e = launch_gate_cluster_rows<false>(ids, weights, logits, w, x, n_expert, k, renormalize,
                                                          MoeGateNorm{}, stream, &taken);
    if (taken || e != cudaSuccess) return e;
  }
  if (type == kBF16)
    return launch_gate_nt<kBF16>(n, ids, weights, logits, counter, w, x, n_expert, c, k, renormalize, stream);
  if (type == kF16)
    return launch_gate_nt<kF16>(n, ids, weights, logits, counter, w, x, n_expert, c, k, renormalize, stream);
  return launch_gate_nt<kF32>(n, ids, weights, logits, counter, w, x, n_expert, c, k, renormalize, stream);
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
