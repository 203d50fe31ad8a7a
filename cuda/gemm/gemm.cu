// The prefill GEMM (cuda/gemm/gemm.cuh): bf16 mma.sync m16n8k16 with f32 accumulators.
//
// Tiling (one kernel template, a table of configurations at the end): a CTA computes a BM x BN
// tile of C (BM tokens x BN weight rows) with WarpsM x WarpsN warps, each a (BM / WarpsM) x
// (BN / WarpsN) sub-tile of m16n8 mma tiles. K advances 32 per stage through a cp.async ring in
// shared memory (16 KB a stage at 128 x 128): while the tensor cores work on stage k, the loads of
// the next stages are in flight (kernels-hopper.md §1: bytes in flight hide the L2/HBM latency).
//
// Shared layout: a tile row of 32 bf16 is 64 bytes = 4 chunks of 16; chunk c of row r sits at
// c ^ ((r >> 1) & 3). ldmatrix reads 8 consecutive rows at one logical chunk; with a 64-byte row
// stride, rows r and r + 2 would share banks (4-way conflict) without the swizzle, with it the 8
// reads hit 8 distinct 16-byte bank groups.
//
// Grid: x = token tiles (fastest), y = weight-row tiles: the CTAs that share a weight tile run
// side by side, so the weights come from HBM once and from L2 after.
//
// Napkin math (H200, Qwen3-8B, M = 512): 8.2 TFLOP per pass; mma.sync bf16 peaks near ~660
// TFLOP/s on sm_90 (wgmma ~990), so 12-15 ms at best, plus the bf16 expansion of the weights.
#include <cuda_bf16.h>

#include <atomic>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemm/gemm.cuh"

namespace bw24::cuda {
namespace {

constexpr int kBK = 32;

// A tile configuration: CTA tile kBM x kBN, kWarpsM x kWarpsN warps, kStages deep cp.async ring.
template <int BM, int BN, int WarpsM, int WarpsN, int Stages>
struct Tiles {
  static constexpr int kBM = BM, kBN = BN, kWarpsM = WarpsM, kWarpsN = WarpsN, kStages = Stages;
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kWM = BM / WarpsM, kWN = BN / WarpsN;  // warp tile
  static constexpr int kMT = kWM / 16, kNT = kWN / 8;          // mma tiles per warp
  static constexpr size_t kSmem = size_t{Stages} * (BM + BN) * kBK * 2;
  static_assert(kWarpsM * kWM == BM && kWM % 16 == 0 && kWN % 16 == 0, "whole m16 / n16 warp tiles");
};

// Element offset of (row, 16-byte chunk) in a [rows][kBK] tile.
__device__ __forceinline__ int swz(int row, int chunk) { return row * kBK + ((chunk ^ ((row >> 1) & 3)) << 3); }

// rows x kBK tile starting at global row r0 of a [n_rows][k] matrix, column k0, into s.
template <int kRows, int kThreads>
__device__ __forceinline__ void load_tile(bf16* s, const bf16* g, int64_t r0, int64_t n_rows, int64_t k, int64_t k0) {
  static_assert(kRows * 4 % kThreads == 0, "whole chunks per thread");
#pragma unroll
  for (int it = 0; it < kRows * 4 / kThreads; ++it) {
    const int i = threadIdx.x + it * kThreads, r = i / 4, c = i % 4;
    const int64_t gr = r0 + r;
    const bool in = gr < n_rows;
    cp_async16(s + swz(r, c), g + (in ? gr : 0) * k + k0 + 8 * c, in ? 16 : 0);
  }
}

// The matrices of one launch; column tile y belongs to the first segment whose tile_end exceeds y.
struct Segments {
  const bf16* w[kMaxGemmSegments];
  float* c[kMaxGemmSegments];
  int64_t n[kMaxGemmSegments], ldc[kMaxGemmSegments];
  unsigned tile_end[kMaxGemmSegments];
  int count;
};
static_assert(kMaxGemmSegments == 3, "the kernel selects among three segments");

template <class C>
__global__ void __launch_bounds__(C::kThreads) gemm_bf16_kernel(const bf16* __restrict__ a, Segments seg, int64_t M,
                                                                int64_t K, bool add) {
  constexpr int kBM = C::kBM, kBN = C::kBN, kStages = C::kStages, kWM = C::kWM, kWN = C::kWN, kMT = C::kMT,
                kNT = C::kNT;
  extern __shared__ uint4 smem_raw[];
  bf16* sa = reinterpret_cast<bf16*>(smem_raw);
  bf16* sb = sa + kStages * kBM * kBK;
  // The segment by selects, not by a dynamic index (which copies the parameter struct to the stack).
  const int s = (seg.count > 1 && blockIdx.y >= seg.tile_end[0]) + (seg.count > 2 && blockIdx.y >= seg.tile_end[1]);
  auto at = [s](const auto& field) { return s == 0 ? field[0] : s == 1 ? field[1] : field[2]; };
  const bf16* __restrict__ w = at(seg.w);
  float* c = at(seg.c);
  const int64_t N = at(seg.n), ldc = at(seg.ldc);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kBM,
                n0 = static_cast<int64_t>(blockIdx.y - (s == 0 ? 0 : s == 1 ? seg.tile_end[0] : seg.tile_end[1])) * kBN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / C::kWarpsN, wn = warp % C::kWarpsN;
  const int kt_count = static_cast<int>(K / kBK);

  pdl_begin();
  auto load_stage = [&](int stage, int kt) {
    load_tile<kBM, C::kThreads>(sa + stage * kBM * kBK, a, m0, M, K, int64_t{kt} * kBK);
    load_tile<kBN, C::kThreads>(sb + stage * kBN * kBK, w, n0, N, K, int64_t{kt} * kBK);
  };
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }

  float acc[kMT][kNT][4] = {};
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt landed for everyone; stage kt - 1 is no longer read
    if (kt + kStages - 1 < kt_count) load_stage((kt + kStages - 1) % kStages, kt + kStages - 1);
    cp_async_commit();
    const bf16* ta = sa + (kt % kStages) * kBM * kBK;
    const bf16* tb = sb + (kt % kStages) * kBN * kBK;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[kMT][4], bfr[kNT][2];
#pragma unroll
      for (int i = 0; i < kMT; ++i) {
        const int row = wm * kWM + i * 16 + lane % 16;
        ldmatrix_x4(af[i], ta + swz(row, 2 * kk + lane / 16));
      }
#pragma unroll
      for (int j = 0; j < kNT / 2; ++j) {
        const int row = wn * kWN + j * 16 + lane % 8 + (lane / 16) * 8;
        uint32_t r[4];
        ldmatrix_x4(r, tb + swz(row, 2 * kk + (lane / 8) % 2));
        bfr[2 * j][0] = r[0];
        bfr[2 * j][1] = r[1];
        bfr[2 * j + 1][0] = r[2];
        bfr[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int j = 0; j < kNT; ++j) mma_bf16(acc[i][j], af[i], bfr[j][0], bfr[j][1]);
    }
  }
  cp_async_wait<0>();

  // Accumulator (i, j): c0, c1 at row lane / 4, columns 2 (lane % 4) + {0, 1}; c2, c3 eight rows down.
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      const int64_t n = n0 + wn * kWN + j * 8 + 2 * (lane % 4);
      if (n >= N) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t m = m0 + wm * kWM + i * 16 + lane / 4 + 8 * h;
        if (m >= M) continue;
        float2* dst = reinterpret_cast<float2*>(c + m * ldc + n);
        float2 v = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        if (add) {
          const float2 old = *dst;
          v.x += old.x;
          v.y += old.y;
        }
        *dst = v;
      }
    }
}

template <class C>
cudaError_t launch(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  // The opt-in above 48 KB of shared memory is per device: once for each (a bit per ordinal < 64;
  // beyond, every launch).
  static std::atomic<uint64_t> configured{0};
  int dev = 0;
  BW24_CUDA_TRY(cudaGetDevice(&dev));
  const uint64_t bit = dev < 64 ? uint64_t{1} << dev : 0;
  if (!(configured.load(std::memory_order_relaxed) & bit)) {
    BW24_CUDA_TRY(cudaFuncSetAttribute(gemm_bf16_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(C::kSmem)));
    configured.fetch_or(bit, std::memory_order_relaxed);
  }
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(gemm_bf16_kernel<C>, grid, dim3(C::kThreads), C::kSmem, s, a, seg, m, k, add);
}

// The dispatch table of the GEMM family. Microbenchmarks (bw24-microbench gemm_bf16_config, Qwen3-8B
// shapes at M = 512) chose the entries and the rule in pick().
struct Config {
  const char* name;
  int bm, bn;
  cudaError_t (*launch)(const bf16*, const Segments&, int64_t, int64_t, bool, cudaStream_t);
};
constexpr Config kConfigs[] = {
    {"64x128 warps 2x4 (32x32) 4 stages", 64, 128, launch<Tiles<64, 128, 2, 4, 4>>},
    {"128x128 warps 2x4 (64x32) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 4, 4>>},
    {"128x128 warps 2x2 (64x64) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 2, 4>>},
    {"128x256 warps 2x4 (64x64) 3 stages", 128, 256, launch<Tiles<128, 256, 2, 4, 3>>},
    {"256x128 warps 4x2 (64x64) 3 stages", 256, 128, launch<Tiles<256, 128, 4, 2, 3>>},
};
constexpr int kConfigCount = sizeof(kConfigs) / sizeof(kConfigs[0]);

// SMs of the current device (cached per ordinal < 64; 132, the H200's, if the query fails).
int sm_count() {
  static std::atomic<int> cache[64] = {};
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 132;
  if (dev < 64 && (sms = cache[dev].load(std::memory_order_relaxed)) > 0) return sms;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) sms = 132;
  if (dev < 64) cache[dev].store(sms, std::memory_order_relaxed);
  return sms;
}

// 64-token tiles when 128-token tiles would leave half the SMs idle (small M or narrow N); else
// 128 x 128 with four 64 x 64 warps. Measured on the H200 at 147640f1 (M = 512 unless noted; us):
//   config                      6144x4096  4096x4096  24576x4096  4096x12288  M=2048 4096x4096
//   64x128, 2x4 warps             98.8       67.3       383         192          251
//   128x128, 2x4 warps (64x32)    94.2       66.5       296         180          196
//   128x128, 2x2 warps (64x64)    90.1       66.2       282         181          186   <- default
//   128x256 / 256x128, 64x64     ~122       121        ~356        344          240   (64 CTAs: 1/SM)
// The 64x64 warp tile issues 8 ldmatrix per 32 mma (64x32: 6 per 16).
int pick(int64_t m, int64_t n_total) {
  const int64_t ctas128 = ((m + 127) / 128) * ((n_total + 127) / 128);
  return (m <= 64 || 2 * ctas128 < sm_count()) ? 0 : 2;
}

}  // namespace

int gemm_bf16_config_count() { return kConfigCount; }
const char* gemm_bf16_config_name(int config) {
  return config >= 0 && config < kConfigCount ? kConfigs[config].name : "?";
}

cudaError_t gemm_bf16(const bf16* a, const bf16* w, float* c, int64_t m, int64_t n, int64_t k, int64_t ldc, GemvOut out,
                      cudaStream_t s, int config) {
  const GemmSegment seg{w, c, n, ldc};
  return gemm_bf16_multi(a, &seg, 1, m, k, out, s, config);
}

cudaError_t gemm_bf16_multi(const bf16* a, const GemmSegment* segs, int n_segs, int64_t m, int64_t k, GemvOut out,
                            cudaStream_t s, int config) {
  if (m <= 0) return cudaSuccess;
  if (k <= 0 || k % kBK != 0 || n_segs < 1 || n_segs > kMaxGemmSegments || out == GemvOut::kGateUp ||
      config >= kConfigCount)
    return cudaErrorInvalidValue;
  int64_t n_total = 0;
  for (int i = 0; i < n_segs; ++i) n_total += segs[i].n;
  const Config& cfg = kConfigs[config >= 0 ? config : pick(m, n_total)];
  Segments seg{};
  unsigned tiles = 0;
  for (int i = 0; i < n_segs; ++i) {
    const GemmSegment& g = segs[i];
    if (g.n <= 0 || g.n % 2 != 0 || g.ldc < g.n || g.ldc % 2 != 0) return cudaErrorInvalidValue;
    seg.w[i] = g.w;
    seg.c[i] = g.c;
    seg.n[i] = g.n;
    seg.ldc[i] = g.ldc;
    tiles += static_cast<unsigned>((g.n + cfg.bn - 1) / cfg.bn);
    seg.tile_end[i] = tiles;
  }
  seg.count = n_segs;
  return cfg.launch(a, seg, m, k, out == GemvOut::kAdd, s);
}

}  // namespace bw24::cuda
