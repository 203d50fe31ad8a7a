// bw24-microbench: Google Benchmark micro-benchmarks of the CUDA kernels at the matrix shapes of
// Qwen3-8B (the CUDA issue's acceptance model), timed with CUDA events (manual time), each row
// reporting the bytes it must move per call as GB/s and as % of the device-to-device copy
// bandwidth measured at start-up. Without a CUDA device it prints SKIPPED and runs nothing.
//
//   ./bw24-microbench --benchmark_filter=Q4_K --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/attention/flash.cuh"
#include "cuda/common/device.h"
#include "cuda/deltanet/gdn.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemv/gemv.cuh"
#include "cuda/moe/moe.cuh"
#include "cuda/norm/rmsnorm.cuh"
#include "cuda/ops/ops.cuh"
#include "cuda/sampling/sampling.cuh"
#include "lib/core/dtype.h"

namespace bw24::bench {  // benchmarks/bulk_probe.cu
cudaError_t bulk_stream(const void* src, int64_t bytes, int stage_bytes, int copy_bytes, int stages, int ctas_per_sm,
                        int row_bytes, unsigned* sink, cudaStream_t stream);
cudaError_t l2_prefetch(const void* src, int64_t bytes, int ctas, cudaStream_t stream);
// benchmarks/chain_probe.cu
struct ChainProbe;
ChainProbe* chain_probe_create();
void chain_probe_destroy(ChainProbe* p);
double chain_probe_bytes(const ChainProbe* p);
int chain_probe_layers();
cudaError_t chain_probe_run(ChainProbe* p, int mode, int ctas_per_sm, bool ahead, bool empty, cudaStream_t stream);
cudaError_t chain_probe_output(const ChainProbe* p, std::vector<int>& out);
}

namespace {

using namespace bw24;

double g_copy_gbs = 0;

// A device buffer of random bytes (kernel speed does not depend on the values).
struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t n) {
    cudaMalloc(&p, n);
    std::vector<uint8_t> h(n);
    uint32_t s = 12345;
    for (auto& b : h) b = static_cast<uint8_t>((s = s * 1664525u + 1013904223u) >> 24);
    cudaMemcpy(p, h.data(), n, cudaMemcpyHostToDevice);
  }
  ~Buffer() { cudaFree(p); }
};

// Runs fn once per iteration between CUDA events; reports bytes per call as bandwidth and, when
// given, floating-point operations per call as TFLOP/s.
template <typename Fn>
void timed(benchmark::State& state, double bytes, Fn fn, double flops = 0) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  fn();  // warm-up
  cudaDeviceSynchronize();
  for (auto _ : state) {
    cudaEventRecord(e0);
    fn();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    state.SetIterationTime(ms * 1e-3);
  }
  if (cudaGetLastError() != cudaSuccess) state.SkipWithError("CUDA error");
  state.counters["GB/s"] = benchmark::Counter(bytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["bytes"] = bytes;
  if (flops > 0)
    state.counters["TFLOP/s"] = benchmark::Counter(flops * state.iterations() / 1e12, benchmark::Counter::kIsRate);
  if (g_copy_gbs > 0)
    state.counters["%copy"] =
        benchmark::Counter(bytes * state.iterations() / 1e9 / g_copy_gbs * 100, benchmark::Counter::kIsRate);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

// int8-path GEMV: args rows, cols, epilogue (0 store, 1 add, 2 gate-up pair), tokens (default 1: a
// multi-token pass, as speculative decoding's verification, takes the warp-per-row kernel).
void BM_GemvQ8(benchmark::State& state, GgmlType type) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const auto out = static_cast<cuda::GemvOut>(state.range(2));
  const int nt = static_cast<int>(state.range(3));
  const TypeInfo* ti = type_info(type);
  const size_t wbytes = size_t(cols / ti->block_elems) * ti->block_bytes * rows;
  const int mats = out == cuda::GemvOut::kGateUp ? 2 : 1;
  Buffer w(wbytes), w2(mats == 2 ? wbytes : 1), xq(cols * nt), xds(cols / 32 * 8 * nt), y(rows * 4 * nt);
  const cuda::ActQ8 x{static_cast<const int8_t*>(xq.p), static_cast<const float2*>(xds.p)};
  timed(state, double(wbytes) * mats, [&] {
    cuda::gemv_q8(w.p, w2.p, static_cast<uint32_t>(type), rows, cols, x, nt, static_cast<float*>(y.p), out, 0, nullptr);
  });
}

void BM_GemvBF16(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Buffer w(size_t(rows) * cols * 2), x(cols * 4), y(rows * 4);
  timed(state, double(rows) * cols * 2, [&] {
    cuda::gemv(w.p, static_cast<uint32_t>(GgmlType::BF16), rows, cols, static_cast<const float*>(x.p), 1,
               static_cast<float*>(y.p), cuda::GemvOut::kStore, nullptr);
  });
}

void BM_RmsnormQ8(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffer x(n * 4), w(n * 4), q(n), ds(n / 32 * 8), y(n * 4);
  timed(state, double(n) * 13, [&] {  // read x, w; write y, q, ds
    cuda::rmsnorm_q8(static_cast<float*>(y.p), static_cast<int8_t*>(q.p), static_cast<float2*>(ds.p),
                     static_cast<const float*>(x.p), static_cast<const float*>(w.p), 1, n, 1e-6f, false, nullptr);
  });
}

// Split-K decode attention, Qwen3-8B heads (32 / 8, head_dim 128): args depth, cache type
// (cuda::KvDtype: 0 f32, 1 f16, 2 q8_0). Bytes: the K and V rows of the history.
void BM_FlashDecode(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0)), H = 32, Hkv = 8, D = 128, n_ctx = depth + 1;
  const auto kv = static_cast<cuda::KvDtype>(state.range(1));
  const size_t cache = size_t(cuda::kv_cache_bytes(kv, n_ctx, Hkv * D));
  Buffer q(H * D * 4), kc(cache), vc(cache), o(H * D * 4), scratch(size_t(cuda::flash_decode_scratch(n_ctx, 1, H, D)) * 4);
  cuda::flash_decode_init_scratch(static_cast<float*>(scratch.p));
  // Random bytes as f16 can be NaN/Inf; the time does not depend on it.
  timed(state, 2.0 * double(cache), [&] {
    cuda::flash_decode(static_cast<float*>(o.p), static_cast<const float*>(q.p), kc.p, vc.p, kv,
                       static_cast<float*>(scratch.p), 1, H, Hkv, D, cuda::DevicePos{nullptr, depth}, 0, 0.088f, n_ctx,
                       nullptr);
  });
}

// Prefill GEMM, bf16 operands: args m (tokens), n (weight rows), k, tile configuration (-1: the
// dispatch table's pick; the others are the table's entries, cuda::gemm_bf16_config_name). Bytes:
// A, W and C once.
void BM_GemmBF16(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int config = static_cast<int>(state.range(3));
  state.SetLabel(config < 0 ? "pick" : cuda::gemm_bf16_config_name(config));
  if (!cuda::gemm_bf16_config_runs(config, k)) return state.SkipWithError("configuration does not run here");
  Buffer a(size_t(m * k) * 2), w(size_t(n * k) * 2), c(size_t(m * n) * 4);
  // bf16 from random bytes can be NaN; the time does not depend on it.
  timed(
      state, double(m * k * 2 + n * k * 2 + m * n * 4),
      [&] {
        cuda::gemm_bf16(static_cast<const cuda::bf16*>(a.p), static_cast<const cuda::bf16*>(w.p),
                        static_cast<float*>(c.p), m, n, k, n, cuda::GemvOut::kStore, nullptr, config);
      },
      2.0 * m * n * k);
}

// Weight expansion for the GEMM: args rows, cols (Q4_K). Bytes: the Q4_K in, bf16 out.
void BM_DequantQ4K(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Buffer w(size_t(rows * cols / 256 * 144)), out(size_t(rows * cols) * 2);
  timed(state, double(rows * cols) * (144.0 / 256 + 2), [&] {
    cuda::dequant_bf16(w.p, static_cast<uint32_t>(GgmlType::Q4_K), rows, cols, 0, rows,
                       static_cast<cuda::bf16*>(out.p), nullptr);
  });
}

// The grouped expert GEMM of MoE prefill at Qwen3-30B-A3B's shapes: 128 experts, a 512-token pass
// with 8 experts per token (4096 pairs, 32 rows per expert, spread evenly). Args: weight type (0:
// Q4_K expanded in the tile loads, 1: BF16 read in place, 2: Q4_K through gemm_grouped_q8, int8
// activations, 3: Q6_K (planes) through gemm_grouped_q8: Qwen3-30B-A3B Q4_K_M's down projections
// in half the layers), 4 / 5: Q4_K / Q6_K through gemm_grouped_q8's superblock-wide kernel
// (activations one scale a 256 columns), product (0: gate-up, two 768 x 2048
// stacks, A rows gathered by token; 1: down, 2048 x 768, C rows scattered). Bytes: every expert's
// weights once, A and C; the routing tables are built once, outside the timing.
void BM_GemmGrouped(benchmark::State& state) {
  constexpr int kExperts = 128, kUsed = 8, kTokens = 512, kPairs = kTokens * kUsed;
  const int arg = static_cast<int>(state.range(0));
  const bool q6k = arg == 3 || arg == 5, per256 = arg >= 4, q8 = arg >= 2, q4k = arg == 0 || arg == 2 || arg == 4,
             down = state.range(1) == 1;
  const int64_t N = down ? 2048 : 768, K = down ? 768 : 2048;
  const int segs = down ? 1 : 2;
  const int64_t slice = q6k ? N * K / 256 * 210 : q4k ? N * K / 256 * 144 : N * K * 2;
  const char* kind = arg == 5   ? "Q6_K int8 superblock"
                     : arg == 4 ? "Q4_K int8 superblock"
                     : q6k      ? "Q6_K int8"
                     : q8       ? "Q4_K int8"
                     : q4k      ? "Q4_K fused"
                                : "BF16";
  state.SetLabel(std::string(kind) +
                 (down ? ", down" : ", gate-up"));
  Buffer w0(size_t(slice * kExperts) + 16), w1(down ? 1 : size_t(slice * kExperts) + 16),
      a(size_t(down ? kPairs : kTokens) * K * 2), ads(size_t(down ? kPairs : kTokens) * K / 32 * 8), c0(size_t(kPairs) * N * 4), c1(down ? 1 : size_t(kPairs) * N * 4);
  std::vector<int32_t> ids(kPairs);
  for (int p = 0; p < kPairs; ++p) ids[size_t(p)] = (p / kUsed * 13 + p % kUsed * 16) % kExperts;  // 8 distinct per token
  int32_t *d_ids = nullptr, *sorted = nullptr, *offsets = nullptr, *tile_start = nullptr;
  int2* tiles = nullptr;
  cudaMalloc(&d_ids, kPairs * 4);
  cudaMalloc(&sorted, kPairs * 4);
  cudaMalloc(&offsets, (kExperts + 1) * 4);
  cudaMalloc(&tile_start, (kExperts + 1) * 4);
  cudaMalloc(&tiles, (kPairs / cuda::kGemmGroupRows + kExperts) * sizeof(int2));
  cudaMemcpy(d_ids, ids.data(), kPairs * 4, cudaMemcpyHostToDevice);
  cuda::moe_group(sorted, offsets, tile_start, tiles, d_ids, kPairs, kExperts, cuda::kGemmGroupRows, nullptr);
  const cuda::GemmSegment s[2] = {{w0.p, static_cast<float*>(c0.p), N, N, slice},
                                  {w1.p, static_cast<float*>(c1.p), N, N, slice}};
  const cuda::GemmGroups g{sorted, offsets, tile_start, tiles, 0, kExperts, down ? 0 : kUsed, down};
  const uint32_t type = static_cast<uint32_t>(q6k ? GgmlType::Q6_K : q4k ? GgmlType::Q4_K : GgmlType::BF16);
  timed(
      state, double(slice) * kExperts * segs + double(down ? kPairs : kTokens) * K * 2 + double(kPairs) * N * 4 * segs,
      [&] {
        if (q8)  // int8 rows from random bytes: a's first bytes, ds random floats (the time does not depend on them)
          cuda::gemm_grouped_q8({static_cast<const int8_t*>(a.p), static_cast<const float2*>(ads.p), per256}, s, segs,
                                type, g, kPairs, K, cuda::GemvOut::kStore, nullptr);
        else
          cuda::gemm_grouped(static_cast<const cuda::bf16*>(a.p), s, segs, type, g, kPairs, K, cuda::GemvOut::kStore,
                             nullptr);
      },
      2.0 * kPairs * N * K * segs);
  for (void* p : {static_cast<void*>(d_ids), static_cast<void*>(sorted), static_cast<void*>(offsets),
                  static_cast<void*>(tile_start), static_cast<void*>(tiles)})
    cudaFree(p);
}

// The delta-net recurrence of a 512-token prefill pass at Qwen3.5-9B's shape (16 key heads, 32
// value heads, dk = dv = 128). Arg 0: gdn_chunked (64-token chunks); 1: the token-by-token kernel
// as 64 calls of 8 tokens (gdn_step below kGdnChunkedFrom). Bytes: q, k, v, z in, out, the state
// read and written.
void BM_GdnPrefill(benchmark::State& state) {
  constexpr int T = 512, Hk = 16, Hv = 32, D = 128;
  const bool chunked = state.range(0) == 0;
  state.SetLabel(chunked ? "chunked" : "token by token, 8-token calls");
  const int64_t C = 2 * Hk * D + Hv * D, Vd = Hv * D;
  Buffer y(size_t(T * C) * 4), z(size_t(T * Vd) * 4), ba(size_t(T) * 2 * Hv * 4), out(size_t(T * Vd) * 4),
      st(size_t(Hv) * D * D * 4), small(size_t(Hv) * 4 * 3 + size_t(D) * 4);
  cudaMemset(y.p, 0, size_t(T * C) * 4);  // finite inputs (random bytes could overflow the recurrence)
  cudaMemset(ba.p, 0, size_t(T) * 2 * Hv * 4);
  cudaMemset(small.p, 0, size_t(Hv) * 4 * 3 + size_t(D) * 4);
  cuda::GdnStepArgs a{};
  a.out = static_cast<float*>(out.p);
  a.state = static_cast<float*>(st.p);
  a.y = static_cast<const float*>(y.p);
  a.z = static_cast<const float*>(z.p);
  a.beta_raw = static_cast<const float*>(ba.p);
  a.alpha_raw = static_cast<const float*>(ba.p) + Hv;
  a.ba_stride = 2 * Hv;
  a.dt_bias = static_cast<const float*>(small.p);
  a.neg_a = static_cast<const float*>(small.p) + Hv;
  a.norm_w = static_cast<const float*>(small.p) + 2 * Hv;
  a.eps = 1e-6f;
  a.Hk = Hk;
  a.Hv = Hv;
  a.dk = a.dv = D;
  timed(state, double(T) * (C + 2 * Vd) * 4 + 2.0 * Hv * D * D * 4, [&] {
    if (chunked) {
      cuda::gdn_chunked(a, T, nullptr);
      return;
    }
    for (int t0 = 0; t0 < T; t0 += 8) {
      cuda::GdnStepArgs b = a;
      b.out += int64_t{t0} * Vd;
      b.y += int64_t{t0} * C;
      b.z += int64_t{t0} * Vd;
      b.beta_raw += int64_t{t0} * 2 * Hv;
      b.alpha_raw += int64_t{t0} * 2 * Hv;
      cuda::gdn_step(b, 8, nullptr);
    }
  });
}

// Flash attention prefill, Qwen3-8B heads, 512 tokens at depth 0 (causal): arg cache type (cuda::KvDtype).
void BM_FlashPrefill(benchmark::State& state) {
  const int T = 512, H = 32, Hkv = 8, D = 128;
  const auto kv = static_cast<cuda::KvDtype>(state.range(0));
  const size_t cache = size_t(cuda::kv_cache_bytes(kv, T, Hkv * D));
  Buffer q(size_t(T) * H * D * 4), kc(cache), vc(cache), o(size_t(T) * H * D * 4);
  timed(
      state, double(T) * H * D * 8 + 2.0 * double(cache),
      [&] {
        cuda::flash_prefill(static_cast<float*>(o.p), static_cast<const float*>(q.p), kc.p, vc.p, kv, T, H, Hkv, D,
                            cuda::DevicePos{nullptr, 0}, 0, 0.088f, T, nullptr);
      },
      4.0 * H * D * (double(T) * (T + 1) / 2));  // QK^T and PV over the causal half
}

// Bulk-copy streaming probe (benchmarks/bulk_probe.cu): args copy bytes, stage bytes, stages, CTAs
// per SM, row bytes (0: a stage's copies contiguous; else the GEMV's row pieces, bulk_probe.cu);
// 1 GiB streamed into shared memory, no arithmetic. The buffer is zeroed on the device
// (Buffer's host-side random fill of a GiB cost ~10 s per row, and the probe needs no data).
void BM_BulkStream(benchmark::State& state) {
  const int copy = static_cast<int>(state.range(0)), stage = static_cast<int>(state.range(1));
  const int stages = static_cast<int>(state.range(2)), per_sm = static_cast<int>(state.range(3));
  const int row = static_cast<int>(state.range(4));
  const int64_t bytes = int64_t{1} << 30;
  void* src = nullptr;
  void* sink = nullptr;
  if (cudaMalloc(&src, static_cast<size_t>(bytes)) != cudaSuccess || cudaMalloc(&sink, 4) != cudaSuccess) {
    cudaFree(src);
    state.SkipWithError("bulk_stream: out of device memory");
    return;
  }
  cudaMemset(src, 0, static_cast<size_t>(bytes));
  const int64_t grid = int64_t{per_sm} * cuda::sm_count();
  const int64_t streamed = bytes / grid / stage * stage * grid;
  auto run = [&] {
    return bench::bulk_stream(src, bytes, stage, copy, stages, per_sm, row, static_cast<unsigned*>(sink), nullptr);
  };
  if (run() != cudaSuccess)
    state.SkipWithError("bulk_stream: not supported here (sm_90+) or bad arguments");
  else
    timed(state, double(streamed), [&] { run(); });
  cudaFree(src);
  cudaFree(sink);
}

// L2 prefetch probe (benchmarks/bulk_probe.cu): args CTAs, MB requested (0: the empty launch).
void BM_L2Prefetch(benchmark::State& state) {
  const int ctas = static_cast<int>(state.range(0));
  const int64_t bytes = state.range(1) << 20, total = int64_t{256} << 20;
  void* src = nullptr;
  if (cudaMalloc(&src, static_cast<size_t>(total)) != cudaSuccess) {
    state.SkipWithError("l2_prefetch: out of device memory");
    return;
  }
  int64_t at = 0;  // a fresh window of the buffer each call, so the lines are not in L2 already
  auto run = [&] {
    const cudaError_t e = bench::l2_prefetch(static_cast<uint8_t*>(src) + at, bytes, ctas, nullptr);
    at = bytes > 0 && at + 2 * bytes <= total ? at + bytes : 0;
    return e;
  };
  if (run() != cudaSuccess)
    state.SkipWithError("l2_prefetch: not supported here (sm_90+) or bad arguments");
  else
    timed(state, double(bytes), [&] { run(); });
  cudaFree(src);
}

// Kernel-boundary probe (benchmarks/chain_probe.cu): args mode (0 floor, 1 chain with PDL, 2 chain,
// 3-6 persistent with a grid barrier: counter, release counter, flags, clusters), CTAs per SM, weights ahead
// of the wait, empty phases (no rows: the boundaries alone). One step is 36 layers and lm_head of a
// Qwen3-8B-like chain (4.42 GB). Counters: us_layer (the step's time over the layers) and same_ints
// (1 when the last phase's output equals the plain chain's; the floor mode reads constant inputs: 0,
// and empty phases write nothing, so their same_ints says nothing).
void BM_DecodeChain(benchmark::State& state) {
  static bench::ChainProbe* probe = bench::chain_probe_create();
  static std::vector<int> reference;
  const int mode = static_cast<int>(state.range(0)), per_sm = static_cast<int>(state.range(1));
  const bool ahead = state.range(2) != 0, empty = state.range(3) != 0;
  if (!probe) {
    state.SkipWithError("decode_chain: out of device memory");
    return;
  }
  if (reference.empty()) {
    if (bench::chain_probe_run(probe, 2, 1, false, false, nullptr) != cudaSuccess ||
        bench::chain_probe_output(probe, reference) != cudaSuccess) {
      state.SkipWithError("decode_chain: not supported here (sm_90+)");
      reference.clear();
      return;
    }
  }
  if (const cudaError_t e = bench::chain_probe_run(probe, mode, per_sm, ahead, empty, nullptr); e != cudaSuccess) {
    state.SkipWithError((std::string("decode_chain: ") + cudaGetErrorString(e)).c_str());
    return;
  }
  std::vector<int> out;
  const bool same = bench::chain_probe_output(probe, out) == cudaSuccess && out == reference;
  timed(state, empty ? 0.0 : bench::chain_probe_bytes(probe),
        [&] { bench::chain_probe_run(probe, mode, per_sm, ahead, empty, nullptr); });
  state.counters["same_ints"] = same ? 1 : 0;
  state.counters["us_layer"] = benchmark::Counter(bench::chain_probe_layers() * 1e-6,
                                                  benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
}

// The greedy choice over Qwen3's 151,936 logits, with what a run-ahead step also stores
// (cuda::StepNext): arg 0 nothing; 1 the position, the hold flag against 16 stop tokens; 2 those
// and the choice into pinned host memory; 3 the pinned store alone. Bytes: the logits.
void BM_Argmax(benchmark::State& state) {
  const int n = 151936;
  const int what = static_cast<int>(state.range(0));
  Buffer x(size_t(n) * 4), out(4), pos(8), hold(4);
  int32_t* pinned = nullptr;
  if (cudaMallocHost(&pinned, sizeof(int32_t)) != cudaSuccess) return state.SkipWithError("pinned slot");
  cuda::StepNext next;
  if (what == 1 || what == 2) {
    next.pos = static_cast<int64_t*>(pos.p);
    next.pos_value = 1;
    next.hold = static_cast<int32_t*>(hold.p);
    next.n_stops = cuda::kStepMaxStops;
    for (int i = 0; i < cuda::kStepMaxStops; ++i) next.stops[i] = n - 1 - i;
  }
  if (what >= 2) next.host_choice = pinned;
  timed(state, double(n) * 4, [&] {
    cuda::argmax(static_cast<int32_t*>(out.p), static_cast<const float*>(x.p), n, nullptr, next);
  });
  cudaFreeHost(pinned);
}

// The one-token routed MoE launches at Qwen3-30B-A3B's shapes (128 experts, 8 a token): args which
// (0: the Q4_K gate-up, 768 x 2048 a matrix; 1 / 2: the Q6_K / Q4_K down + combine, 2048 x 768) and
// hot (1: the same 8 experts every call, so their ~14 / ~10 MB stay in L2 after the warm-up; 0: the
// next 8 of 128 every call, each expert's bytes back only after 15 other calls, ~200 MB later, so
// from DRAM). Hot against cold says how much of a routed launch is waiting on DRAM (round 46: the
// expert prefetch found the hits worth only ~0.36 us a layer in the step).
void BM_MoeRouted(benchmark::State& state) {
  constexpr int kExperts = 128, kUsed = 8, kRounds = kExperts / kUsed;
  const int which = static_cast<int>(state.range(0));
  const bool hot = state.range(1) != 0;
  const GgmlType type = which == 1 ? GgmlType::Q6_K : GgmlType::Q4_K;
  const TypeInfo* ti = type_info(type);
  const int64_t rows = which == 0 ? 768 : 2048, cols = which == 0 ? 2048 : 768;
  const int64_t expert_bytes = cols / ti->block_elems * int64_t(ti->block_bytes) * rows;
  const int mats = which == 0 ? 2 : 1;
  Buffer w(size_t(expert_bytes) * kExperts), w2(mats == 2 ? size_t(expert_bytes) * kExperts : 1);
  const int x_rows = which == 0 ? 1 : kUsed;  // the gate-up reads the token's row, the down a row a pair
  Buffer xq(size_t(cols) * x_rows), xds(size_t(cols) / 32 * 8 * x_rows), y(size_t(rows) * 4 * kUsed),
      resid(size_t(rows) * 4), ids(sizeof(int32_t) * kExperts);
  std::vector<int32_t> h_ids(kExperts);
  for (int i = 0; i < kExperts; ++i) h_ids[size_t(i)] = i;  // round r: experts 8r .. 8r + 7
  cudaMemcpy(ids.p, h_ids.data(), sizeof(int32_t) * kExperts, cudaMemcpyHostToDevice);
  std::vector<float> h_weights(kUsed, 1.0f / kUsed);
  Buffer weights(sizeof(float) * kUsed);
  cudaMemcpy(weights.p, h_weights.data(), sizeof(float) * kUsed, cudaMemcpyHostToDevice);
  const cuda::ActQ8 x{static_cast<const int8_t*>(xq.p), static_cast<const float2*>(xds.p)};
  int call = 0;
  timed(state, double(expert_bytes) * mats * kUsed, [&] {
    const int round = hot ? 0 : call++ % kRounds;
    const int32_t* round_ids = static_cast<const int32_t*>(ids.p) + round * kUsed;
    if (which == 0) {
      const cuda::GemvRoute route{round_ids, expert_bytes, kUsed, kUsed};
      cuda::gemv_q8(w.p, w2.p, static_cast<uint32_t>(type), rows, cols, x, 1, static_cast<float*>(y.p),
                    cuda::GemvOut::kGateUp, 0, nullptr, &route);
    } else {
      const cuda::GemvRoute route{round_ids, expert_bytes, kUsed, 1};
      const cuda::MoeCombine c{static_cast<float*>(resid.p), static_cast<const float*>(weights.p), nullptr, nullptr,
                               kUsed};
      cuda::gemv_q8_combine(w.p, static_cast<uint32_t>(type), rows, cols, x, route, c, nullptr);
    }
  });
}

void register_all() {
  // Qwen3-8B: QKV 6144 x 4096, O 4096 x 4096, gate+up 2 x 12288 x 4096, down 4096 x 12288,
  // lm_head 151936 x 4096 (Q6_K in Q4_K_M files).
  for (auto [name, type] : {std::pair{"Q4_K", GgmlType::Q4_K}, std::pair{"Q6_K", GgmlType::Q6_K},
                            std::pair{"Q8_0", GgmlType::Q8_0}}) {
    auto* b = benchmark::RegisterBenchmark((std::string("gemv_q8/") + name).c_str(), BM_GemvQ8, type);
    b->Args({6144, 4096, 0, 1})->Args({4096, 4096, 1, 1})->Args({12288, 4096, 2, 1})->Args({4096, 12288, 1, 1});
    // Multi-token add passes (the O and down projections of a verification step).
    if (type == GgmlType::Q4_K) b->Args({4096, 4096, 1, 2})->Args({4096, 4096, 1, 4})->Args({4096, 4096, 1, 8});
    if (type == GgmlType::Q6_K) b->Args({151936, 4096, 0, 1});
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("gemv_bf16", BM_GemvBF16)
      ->Args({6144, 4096})->Args({12288, 4096})->Args({4096, 12288})->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("rmsnorm_q8", BM_RmsnormQ8)->Arg(4096)->Arg(12288)->UseManualTime()->Unit(
      benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("flash_decode", BM_FlashDecode)
      ->Args({64, 1})->Args({128, 1})->Args({4096, 0})->Args({4096, 1})->Args({4096, 2})->Args({32768, 1})->Args({32768, 2})->UseManualTime()->Unit(
          benchmark::kMicrosecond);
  auto* gemm = benchmark::RegisterBenchmark("gemm_bf16", BM_GemmBF16);
  for (int config = -1; config < cuda::gemm_bf16_config_count(); ++config)
    for (auto [m, n, k] : {std::tuple{512, 6144, 4096}, std::tuple{512, 4096, 4096}, std::tuple{512, 24576, 4096},
                           std::tuple{512, 4096, 12288}, std::tuple{2048, 4096, 4096}})
      gemm->Args({m, n, k, config});
  gemm->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("dequant_q4_k", BM_DequantQ4K)
      ->Args({24576, 4096})->Args({4096, 12288})->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("gemm_grouped", BM_GemmGrouped)
      ->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1})->Args({2, 0})->Args({2, 1})->Args({3, 0})->Args({3, 1})
      ->Args({4, 0})->Args({4, 1})->Args({5, 0})->Args({5, 1})
      ->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("gdn_prefill", BM_GdnPrefill)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);
  auto* bulk = benchmark::RegisterBenchmark("bulk_stream", BM_BulkStream);
  for (int copy : {1152, 2304, 4608, 9216, 18432}) bulk->Args({copy, 18432, 3, 2, 0});
  bulk->Args({2304, 18432, 5, 2, 0})->Args({2304, 36864, 3, 2, 0})->Args({36864, 36864, 3, 2, 0})->Args({2304, 18432, 3, 1, 0});
  // The streamed GEMV's launches as row pieces (round 70): the Q4_K gate-up (1,152 of 2,304-byte rows, three CTAs an
  // SM), the Q4_K down (3,456 of 6,912, two CTAs, two stages), each beside its contiguous twin, and the gate-up's
  // pieces at a quarter of a row.
  bulk->Args({1152, 18432, 3, 3, 0})->Args({1152, 18432, 3, 3, 2304})->Args({1152, 18432, 3, 3, 4608});
  bulk->Args({3456, 27648, 2, 2, 0})->Args({3456, 27648, 2, 2, 6912});
  bulk->UseManualTime()->Unit(benchmark::kMicrosecond);
  auto* chain = benchmark::RegisterBenchmark("decode_chain", BM_DecodeChain);
  for (int per_sm : {1, 2, 3})
    for (int mode : {1, 3, 4, 5, 6}) chain->Args({mode, per_sm, 0, 1});
  for (int ahead : {0, 1})
    for (int per_sm : {2, 3})
      for (int mode : {0, 1, 2, 3, 4, 5, 6}) chain->Args({mode, per_sm, ahead, 0});
  chain->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);
  benchmark::RegisterBenchmark("argmax", BM_Argmax)
      ->Arg(0)->Arg(1)->Arg(2)->Arg(3)->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("l2_prefetch", BM_L2Prefetch)
      ->Args({1, 0})->Args({1, 1})->Args({1, 4})->Args({1, 14})->Args({8, 14})->Args({24, 10})->Args({132, 14})
      ->Args({132, 64})->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("moe_routed", BM_MoeRouted)
      ->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1})->Args({2, 0})->Args({2, 1})
      ->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("flash_prefill", BM_FlashPrefill)
      ->Arg(0)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  if (bw24::cuda::device_count() == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  g_copy_gbs = bw24::cuda::copy_bandwidth_gbs(0);
  std::printf("device-to-device copy: %.0f GB/s\n", g_copy_gbs);
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
