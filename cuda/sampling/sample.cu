// Top-k sampling on the device (cuda/sampling/sampling.cuh sample_top_k): the host sampler's chain
// (lib/sampling/sampler.cpp: top-k -> temperature -> softmax -> top-p -> min-p -> draw) on one CTA,
// so a sampled decode step reads back 4 bytes like a greedy one.
//
// 1. Radix select of the k-th largest logit: four passes of 8 bits over the row (600 KB for
//    Qwen3, from L2), a 256-bin histogram per pass with warp-aggregated shared atomics (one atomic
//    per distinct bin per warp: the first pass's bins are the exponents, which most logits share).
// 2. Compaction of the k candidates: every logit at or above the threshold when all the keys equal
//    to it belong (the last pass's histogram counts them), else those above it and then the equal
//    ones in increasing id order (a scan over contiguous id ranges): ties resolve as the host's
//    sort does (value descending, id ascending). The passes over the row keep 8 loads per thread
//    in flight (151936 logits: 19 round trips a pass instead of 149).
// 3. Bitonic sort of the candidates as 64-bit keys (orderable value, ~id).
// 4. The host's arithmetic, in the host's order where order matters: p_i = exp(l_i / T - l_0 / T)
//    in double (the quotients in float, as the host computes them), normalized, then one thread
//    walks the top-p and min-p cuts and the draw (sums in sorted order).
// Tokens equal the host's for the same uniform u, except where u falls within a few ulps of a
// cumulative boundary (the device's double exp may differ from the C library's by an ulp).
#include <math.h>

#include "cuda/common/launch.cuh"
#include "cuda/sampling/sampling.cuh"
#include "cuda/sampling/step_next.cuh"

namespace bw24::cuda {
namespace {

constexpr int kThreads = 1024, kLoads = 8;  // loads in flight per thread in the passes over the row
static_assert(kSampleMaxTopK == kThreads, "one candidate per thread");

// Float bits to an unsigned key with the same order (NaN: the smallest key; -0 as +0, which the
// host's comparisons hold equal).
__device__ __forceinline__ uint32_t order_key(float v) {
  if (isnan(v)) return 0;
  const uint32_t b = v == 0.0f ? 0u : __float_as_uint(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float key_value(uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// The keys of elements base + u * kThreads + tid (u < kLoads; 0 past n): kLoads loads in flight per
// thread (a warp issues in order: one load, then the step that waits for it, would cost an L2 round
// trip per element).
__device__ __forceinline__ void load_keys(const float* x, int32_t n, int32_t base, int tid, uint32_t (&key)[kLoads]) {
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const int32_t i = base + u * kThreads + tid;
    key[u] = i < n ? order_key(x[i]) : 0;
  }
}

// hist[bin] += 1 for the lanes with valid set, one atomic per distinct bin of the warp.
__device__ __forceinline__ void warp_hist_add(int* hist, uint32_t bin, bool valid) {
  const unsigned active = __ballot_sync(0xffffffffu, valid);
  if (!active) return;
  const unsigned same = __match_any_sync(0xffffffffu, valid ? bin : 0xffffffffu) & active;
  const int lane = threadIdx.x % 32;
  if (valid && (same & ((1u << lane) - 1)) == 0) atomicAdd(&hist[bin], __popc(same));
}

// A tie across the k-th value: the first `take` keys equal to thr in increasing id order go to
// cand[above ..). Each thread counts the equal keys of its contiguous id range, an exclusive scan
// over the ranges ranks them. Rare (exact ties at the k-th logit); every thread must call it.
__device__ void select_equal(unsigned long long* cand, int* counts, int above, const float* x, int32_t n, uint32_t thr,
                             int take) {
  const int tid = threadIdx.x;
  const int32_t per = (n + kThreads - 1) / kThreads, lo = min(n, tid * per), hi = min(n, lo + per);
  int mine = 0;
  for (int32_t i = lo; i < hi; ++i) mine += order_key(x[i]) == thr;
  counts[tid] = mine;
  __syncthreads();
  if (tid == 0) {  // exclusive prefix over the contiguous id ranges (1024 adds)
    int acc = 0;
    for (int t = 0; t < kThreads; ++t) {
      const int c = counts[t];
      counts[t] = acc;
      acc += c;
    }
  }
  __syncthreads();
  for (int32_t i = lo, rank = counts[tid]; i < hi && rank < take; ++i)
    if (order_key(x[i]) == thr) {
      cand[above + rank] = (static_cast<unsigned long long>(thr) << 32) | (~static_cast<uint32_t>(i));
      ++rank;
    }
}

__global__ void __launch_bounds__(kThreads) sample_kernel(int32_t* out, const float* x, int32_t n, int k,
                                                          float temperature, float top_p, float min_p, double u,
                                                          StepNext next) {
  __shared__ int hist[256];
  __shared__ uint32_t sel_prefix, sel_remaining, sel_count;
  __shared__ unsigned long long cand[kThreads];
  __shared__ double prob[kThreads];
  __shared__ int counts[kThreads];
  __shared__ int n_cand;
  pdl_begin();
  const int tid = threadIdx.x;

  // 1. The k-th largest key: bytes from the top, keeping the prefix of the keys still in play.
  uint32_t prefix = 0, mask = 0;
  if (tid == 0) sel_remaining = static_cast<uint32_t>(k);
  for (int shift = 24; shift >= 0; shift -= 8) {
    if (tid < 256) hist[tid] = 0;
    __syncthreads();
    for (int32_t base = 0; base < n; base += kThreads * kLoads) {
      uint32_t key[kLoads];
      load_keys(x, n, base, tid, key);
#pragma unroll
      for (int u = 0; u < kLoads; ++u)
        warp_hist_add(hist, (key[u] >> shift) & 255u, base + u * kThreads + tid < n && (key[u] & mask) == prefix);
    }
    __syncthreads();
    if (tid == 0) {  // the bin holding the remaining-th largest, from the top
      uint32_t need = sel_remaining, above = 0;
      int b = 255;
      for (; b > 0; --b) {
        if (above + static_cast<uint32_t>(hist[b]) >= need) break;
        above += static_cast<uint32_t>(hist[b]);
      }
      sel_remaining = need - above;
      sel_count = static_cast<uint32_t>(hist[b]);  // after the last pass: the keys equal to the k-th
      sel_prefix = prefix | (static_cast<uint32_t>(b) << shift);
    }
    __syncthreads();
    prefix = sel_prefix;
    mask |= 255u << shift;
  }
  const uint32_t thr = prefix;                 // the k-th largest key
  const int take_equal = static_cast<int>(sel_remaining);  // how many keys equal to thr belong
  // Usually every key equal to the k-th belongs (no tie across the boundary): then the candidates
  // are the keys >= thr, in any order (sorted below). Else the equal ones by increasing id.
  const bool all_equal = static_cast<int>(sel_count) == take_equal;

  // 2. Candidates: keys above thr (with all_equal: at or above), any order; then, for a tie across
  // the boundary, the first take_equal keys equal to thr by id.
  if (tid == 0) n_cand = 0;
  cand[tid] = 0;  // below every real candidate (key 0 and id ~0)
  __syncthreads();
  for (int32_t base = 0; base < n; base += kThreads * kLoads) {
    uint32_t key[kLoads];
    load_keys(x, n, base, tid, key);
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int32_t i = base + u * kThreads + tid;
      if (i < n && (key[u] > thr || (all_equal && key[u] == thr)))
        cand[atomicAdd(&n_cand, 1)] = (static_cast<unsigned long long>(key[u]) << 32) | (~static_cast<uint32_t>(i));
    }
  }
  __syncthreads();  // n_cand final
  if (!all_equal) select_equal(cand, counts, n_cand, x, n, thr, take_equal);
  __syncthreads();

  // 3. Descending bitonic sort of the 1024 keys (value, then lower id first).
  for (int size = 2; size <= kThreads; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      const int j = tid ^ stride;
      if (j > tid) {
        const bool desc = (tid & size) == 0;
        const unsigned long long a = cand[tid], b = cand[j];
        if (desc ? a < b : a > b) cand[tid] = b, cand[j] = a;
      }
      __syncthreads();
    }

  // 4. Probabilities as the host computes them; the cuts and the draw by one thread, in order.
  const double mx = static_cast<double>(key_value(static_cast<uint32_t>(cand[0] >> 32)) / temperature);
  if (tid < k) prob[tid] = exp(static_cast<double>(key_value(static_cast<uint32_t>(cand[tid] >> 32)) / temperature) - mx);
  __syncthreads();
  if (tid == 0) {
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += prob[i];
    for (int i = 0; i < k; ++i) prob[i] /= sum;
    int keep = k;
    if (top_p < 1.0f) {
      double cum = 0;
      for (int i = 0; i < k; ++i) {
        cum += prob[i];
        if (cum >= top_p) {
          keep = i + 1;
          break;
        }
      }
    }
    if (min_p > 0.0f) {
      const double floor_p = prob[0] * min_p;
      int cut = 1;
      while (cut < keep && prob[cut] >= floor_p) ++cut;
      keep = cut;
    }
    double total = 0;
    for (int i = 0; i < keep; ++i) total += prob[i];
    const double r = u * total;
    double acc = 0;
    int pick = keep - 1;
    for (int i = 0; i < keep; ++i) {
      acc += prob[i];
      if (r < acc) {
        pick = i;
        break;
      }
    }
    const auto choice = static_cast<int32_t>(~static_cast<uint32_t>(cand[pick]));
    *out = choice;
    store_step_next(next, choice);
  }
}

}  // namespace

cudaError_t sample_top_k(int32_t* out, const float* logits, int32_t n, const SampleParams& p, double u,
                         cudaStream_t stream, const StepNext& next) {
  if (n <= 0 || p.top_k < 1 || p.top_k > kSampleMaxTopK || !(p.temperature > 0.0f) || u < 0.0 || u >= 1.0)
    return cudaErrorInvalidValue;
  const int k = p.top_k < n ? p.top_k : n;
  return launch_pdl(sample_kernel, dim3(1), dim3(kThreads), 0, stream, out, logits, n, k, p.temperature, p.top_p,
                    p.min_p, u, next);
}

}  // namespace bw24::cuda
