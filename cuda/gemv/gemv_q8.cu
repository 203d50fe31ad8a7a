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
//
// Files: the formats' records (load / dot / row_dot) and the activations' staging are q8_formats.cuh's; this file
// is the kernel, its launches and the int8 path's entry points; gemv_q8_routed.cu the MoE routed kernels (the
// copy-engine gate-up, the down with the combine as its epilogue).
#include <atomic>

#include "cuda/common/launch.cuh"
#include "cuda/gemv/q8_formats.cuh"

namespace bw24::cuda {
using namespace gemv_detail;
namespace {

// ---------------------------------------------------------------------------------------------
// The kernel shell: a warp's row, then the epilogue.
// ---------------------------------------------------------------------------------------------
// kRows: rows a warp takes at once (rows_per_warp). A warp dots kMats pieces with all their loads
// in flight: gate and up of one row, or kRows consecutive rows of one matrix (rows a multiple of
// kRows). Each lane adds its blocks in the same order either way, so a
// row's sum does not depend on kRows (the kernel check compares routed launches with plain ones
// bit for bit).
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

// The rows a warp takes: kRoutedStoreRows (q8_formats.cuh says why) in a routed one-token store launch (a MoE
// expert's down projection) whose row count allows, else one.
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
  if (type == kQ4_K && nt == 1 && out == GemvOut::kGateUp && route.ids && gate_up_bulk_takes(segs[0], w2, cols, route))
    return gate_up_bulk_launch(segs[0], w2, cols, x, act, route, s);
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

cudaError_t gemv_detail::gate_up_register_occupancy(uint32_t type, int64_t cols, GemvOccupancy* o) {
  const size_t smem = staged_smem(staged_bytes(cols, 1));
  switch (type) {
    case kQ4_K: return occupancy_of<gemv_q8_kernel<Q4_K, 1, GemvOut::kGateUp, 1>>(smem, o);
    case kQ5_K: return occupancy_of<gemv_q8_kernel<Q5_K, 1, GemvOut::kGateUp, 1>>(smem, o);
    case kQ6_K: return occupancy_of<gemv_q8_kernel<Q6_K, 1, GemvOut::kGateUp, 1>>(smem, o);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
