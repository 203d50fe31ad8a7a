// The prefill GEMM (cuda/gemm/gemm.cuh). In this file, in order:
//   1. bf16 mma.sync m16n8k16 tiles with f32 accumulators (every arch; the dense GEMM below sm_90
//      and at M <= 64, and the grouped GEMM of MoE prefill over bf16 or in-tile expanded experts);
//   2. the int8 grouped GEMM (mma m16n8k32 s8 over Q4_K / Q6_K quants as stored, MoE prefill);
//   3. on sm_90a the warpgroup-MMA (wgmma) dense GEMM, fed by cp.async, then by TMA (the pick);
//   4. the dispatch table of the dense configurations and the entry points.
// One epilogue, store_c, writes every tile's C fragments.
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
//
// The weight side of a stage comes through a B loader: BF16 rows by cp.async straight into the
// tile the MMAs read, or (Q4_K, Q6_K in the grouped GEMM: the fused expansion) the quantized bytes
// of the stage's 32 columns by cp.async into a staging ring, expanded to one bf16 tile in shared
// memory right before the MMAs. Why: the separate expansion writes 2 bytes per weight to HBM and
// the GEMM reads them back (4.6 bytes of traffic per Q4_K weight against 0.56), half of a
// Qwen3-30B-A3B pass, where an expert's ~32 tokens make one token tile, so each weight is expanded
// once either way. Dense passes have 4-8 token tiles per weight tile, each of which would expand the
// same weights again; there the one expansion pass into a scratch measured faster.
#include <cuda.h>  // CUtensorMap and its enums (the encoder comes through the runtime)
#include <cuda_bf16.h>

#include <type_traits>

#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemm/expand.cuh"
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

// The rows of one CTA's A tile: row r of the tile reads a + row(r) * K, where row(r) = m0 + r, or
// through the grouped GEMM's index (sorted[m0 + r] / a_div); rows at or past m_end are zeros.
// Resolved once per CTA (kRows * 4 / kThreads rows per thread), not per K stage.
template <int kRows, int kThreads>
struct ARows {
  static constexpr int kIters = kRows * 4 / kThreads;
  const bf16* row[kIters];
  const bf16* base;  // a valid address for the zero-filled rows (cp.async reads 0 bytes of it)
  __device__ ARows(const bf16* a, int64_t K, int64_t m0, int64_t m_end, const int32_t* index, int a_div) : base(a) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int64_t m = m0 + (threadIdx.x + it * kThreads) / 4;
      row[it] = m >= m_end ? nullptr : a + (index ? index[m] / a_div : m) * K;
    }
  }
  __device__ __forceinline__ void load(bf16* s, int64_t k0) const {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = threadIdx.x + it * kThreads, r = i / 4, c = i % 4;
      cp_async16(s + swz(r, c), row[it] ? row[it] + k0 + 8 * c : base, row[it] ? 16 : 0);
    }
  }
};

// Eight floats as bf16 into one 16-byte chunk of a tile (round to nearest, as dequant_bf16).
__device__ __forceinline__ void store8(bf16* dst, const float* v) {
  alignas(16) bf16 b[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) b[j] = __float2bfloat16_rn(v[j]);
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(b);
}

// B loaders: issue() starts the copies of stage kt (columns [32 kt, 32 kt + 32)) of weight rows
// [n0, n0 + kBN) into a staging slot; the MMAs then read a [kBN][kBK] bf16 tile: the slot itself
// (kExpands false) or what expand() makes of it. Rows at or past N come in as zeros.
template <int kBN, int kThreads>
struct LoadBf16 {
  static constexpr int kStageBytes = kBN * kBK * 2;
  static constexpr bool kExpands = false;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    load_tile<kBN, kThreads>(reinterpret_cast<bf16*>(st), reinterpret_cast<const bf16*>(w), n0, N, K, int64_t{kt} * kBK);
  }
  __device__ static void expand(const uint8_t*, bf16*, int64_t, int64_t, int64_t, int) {}
};

// Q4_K (file layout, 144-byte blocks of 256): stage kt is sub-block s = kt % 8 of block kt / 8.
// Per row 48 bytes: the block's head (d, dmin, scales) and the 32 qs bytes of s's pair.
template <int kBN, int kThreads>
struct LoadQ4K {
  static constexpr int kRowBytes = 48, kStageBytes = kBN * kRowBytes;
  static constexpr bool kExpands = true;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8;
    const int s = kt % 8;
    for (int i = threadIdx.x; i < kBN * 3; i += kThreads) {
      const int r = i / 3, part = i % 3;
      const int64_t row = n0 + r;
      const bool in = row < N;
      const uint8_t* blk = w + ((in ? row : 0) * bpr + kb) * 144;
      cp_async16(st + r * kRowBytes + part * 16, blk + (part == 0 ? 0 : 16 + 32 * (s / 2) + 16 * (part - 1)),
                 in ? 16 : 0);
    }
  }
  __device__ static void expand(const uint8_t* st, bf16* tile, int64_t, int64_t, int64_t, int kt) {
    for (int i = threadIdx.x; i < kBN * 4; i += kThreads) {
      const int r = i / 4, c = i % 4;
      const uint8_t* head = st + r * kRowBytes;
      float v[8];
      q4k_expand8(head, head + 16 + 8 * c, kt % 8, v);
      store8(tile + swz(r, c), v);
    }
  }
};

// Byte offset of block gb's d in Q6_K planes of n blocks (after ql, qh and the scales).
__device__ __forceinline__ int64_t q6k_d_offset(int64_t n, int64_t gb) { return n * 208 + gb * 2; }

// Q6_K planes (lib/quant/repack.h: ql[128] | qh[64] | scales[16] | d of every block in turn):
// stage kt is sub-block s = kt % 8 = 4 half + j of block kt / 8. Per row 96 bytes: the 32 ql and
// 32 qh bytes of s, the block's 16 scales and the aligned 16 bytes that hold its d (the weight
// allocations carry 16 bytes of slack for the last block's window, DeviceWeights::upload).
template <int kBN, int kThreads>
struct LoadQ6K {
  static constexpr int kRowBytes = 96, kStageBytes = kBN * kRowBytes;
  static constexpr bool kExpands = true;
  __device__ static void issue(uint8_t* st, const uint8_t* w, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8, n = N * bpr;
    const int s = kt % 8, half = s / 4, j = s % 4;
    for (int i = threadIdx.x; i < kBN * 6; i += kThreads) {
      const int r = i / 6, part = i % 6;
      const int64_t row = n0 + r;
      const bool in = row < N;
      const int64_t gb = (in ? row : 0) * bpr + kb;
      const int64_t off = part < 2    ? gb * 128 + 64 * half + 32 * (j & 1) + 16 * part
                          : part < 4  ? n * 128 + gb * 64 + 32 * half + 16 * (part - 2)
                          : part == 4 ? n * 192 + gb * 16
                                      : q6k_d_offset(n, gb) & ~int64_t{15};
      cp_async16(st + r * kRowBytes + part * 16, w + off, in ? 16 : 0);
    }
  }
  __device__ static void expand(const uint8_t* st, bf16* tile, int64_t n0, int64_t N, int64_t K, int kt) {
    const int64_t bpr = K / 256, kb = kt / 8, n = N * bpr;
    const int s = kt % 8, half = s / 4, j = s % 4;
    for (int i = threadIdx.x; i < kBN * 4; i += kThreads) {
      const int r = i / 4, c = i % 4, l0 = 8 * c;
      const uint8_t* row = st + r * kRowBytes;
      const int64_t gb = (n0 + r < N ? n0 + r : 0) * bpr + kb;
      const int8_t sc = static_cast<int8_t>(row[64 + 8 * half + 2 * j + l0 / 16]);
      float v[8];
      q6k_expand8(row + l0, row + 32 + l0, j, half_at(row + 80 + (q6k_d_offset(n, gb) & 15)) * sc, v);
      store8(tile + swz(r, c), v);
    }
  }
};

// The matrices of one launch; column tile y belongs to the first segment whose tile_end exceeds y.
struct Segments {
  const uint8_t* w[kMaxGemmSegments];
  float* c[kMaxGemmSegments];
  int64_t n[kMaxGemmSegments], ldc[kMaxGemmSegments], w_stride[kMaxGemmSegments];
  unsigned tile_end[kMaxGemmSegments];
  int count;
};
static_assert(kMaxGemmSegments == 3, "the kernel selects among three segments");

// One CTA's work: the C tile [m0, min(m0 + kBM, m_end)) x [n0, n0 + kBN) of the product with w
// [N][K]; A rows as ARows resolves them; C row m at c + (c_index ? c_index[m] : m) * ldc.
struct TileJob {
  const bf16* a;
  const int32_t* a_index;
  int a_div;
  int64_t m0, m_end;
  const uint8_t* w;
  int64_t n0, N, K;
  float* c;
  const int32_t* c_index;
  int64_t ldc;
  bool add;
};

// The epilogue of every tile: a lane's four accumulators of one m16n8 C fragment, v0, v1 at (mi,
// ni), (mi, ni + 1) and v2, v3 eight rows down, relative to the job's (m0, n0); rows at or past
// m_end and columns past N skipped, C row m at c_index[m] when scattered. A column pair goes out as
// one float2 where N and ldc are even (the usual case), else as single floats (the shared expert's
// one-row gate).
// pairs: (j.N % 2 == 0) && (j.ldc % 2 == 0), decided once by the caller.
__device__ __forceinline__ void store_c(const TileJob& j, bool pairs, int mi, int ni, const float* v) {
  const int64_t n = j.n0 + ni;
  if (n >= j.N) return;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t m = j.m0 + mi + 8 * h;
    if (m >= j.m_end) continue;
    float* dst = j.c + (j.c_index ? j.c_index[m] : m) * j.ldc + n;
    float v0 = v[2 * h], v1 = v[2 * h + 1];
    if (pairs) {
      float2* d2 = reinterpret_cast<float2*>(dst);
      if (j.add) {
        const float2 old = *d2;
        v0 += old.x;
        v1 += old.y;
      }
      *d2 = make_float2(v0, v1);
    } else {
      dst[0] = j.add ? dst[0] + v0 : v0;
      if (n + 1 < j.N) dst[1] = j.add ? dst[1] + v1 : v1;
    }
  }
}

// Shared memory of configuration C with B loader BL: the A ring, the B staging ring and, for
// expanding loaders, the one bf16 B tile the MMAs read.
template <class C, template <int, int> class BL>
constexpr size_t smem_bytes() {
  using B = BL<C::kBN, C::kThreads>;
  return size_t{C::kStages} * (size_t{C::kBM} * kBK * 2 + B::kStageBytes) + (B::kExpands ? size_t{C::kBN} * kBK * 2 : 0);
}

template <class C, template <int, int> class BL>
__device__ __forceinline__ void gemm_tile(const TileJob& j, uint8_t* smem) {
  using B = BL<C::kBN, C::kThreads>;
  constexpr int kBM = C::kBM, kStages = C::kStages, kWM = C::kWM, kWN = C::kWN, kMT = C::kMT, kNT = C::kNT;
  bf16* sa = reinterpret_cast<bf16*>(smem);
  uint8_t* sq = smem + kStages * kBM * kBK * 2;                         // B staging ring
  bf16* sx = reinterpret_cast<bf16*>(sq + kStages * B::kStageBytes);  // expanded B tile
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / C::kWarpsN, wn = warp % C::kWarpsN;
  const int kt_count = static_cast<int>(j.K / kBK);
  const ARows<kBM, C::kThreads> arows(j.a, j.K, j.m0, j.m_end, j.a_index, j.a_div);
  auto load_stage = [&](int stage, int kt) {
    arows.load(sa + stage * kBM * kBK, int64_t{kt} * kBK);
    B::issue(sq + stage * B::kStageBytes, j.w, j.n0, j.N, j.K, kt);
  };
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }

  float acc[kMT][kNT][4] = {};
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt landed for everyone; stage kt - 1 (and the expanded tile) no longer read
    const uint8_t* slot = sq + (kt % kStages) * B::kStageBytes;
    if constexpr (B::kExpands) {
      B::expand(slot, sx, j.n0, j.N, j.K, kt);
      __syncthreads();
    }
    if (kt + kStages - 1 < kt_count) load_stage((kt + kStages - 1) % kStages, kt + kStages - 1);
    cp_async_commit();
    const bf16* ta = sa + (kt % kStages) * kBM * kBK;
    const bf16* tb = B::kExpands ? sx : reinterpret_cast<const bf16*>(slot);
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[kMT][4], bfr[kNT][2];
#pragma unroll
      for (int i = 0; i < kMT; ++i) {
        const int row = wm * kWM + i * 16 + lane % 16;
        ldmatrix_x4(af[i], ta + swz(row, 2 * kk + lane / 16));
      }
#pragma unroll
      for (int jj = 0; jj < kNT / 2; ++jj) {
        const int row = wn * kWN + jj * 16 + lane % 8 + (lane / 16) * 8;
        uint32_t r[4];
        ldmatrix_x4(r, tb + swz(row, 2 * kk + (lane / 8) % 2));
        bfr[2 * jj][0] = r[0];
        bfr[2 * jj][1] = r[1];
        bfr[2 * jj + 1][0] = r[2];
        bfr[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int jj = 0; jj < kNT; ++jj) mma_bf16(acc[i][jj], af[i], bfr[jj][0], bfr[jj][1]);
    }
  }
  cp_async_wait<0>();

  // Accumulator (i, jj): c0, c1 at row lane / 4, columns 2 (lane % 4) + {0, 1}; c2, c3 eight rows down.
  const bool pairs = (j.N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int jj = 0; jj < kNT; ++jj)
      store_c(j, pairs, wm * kWM + i * 16 + lane / 4, wn * kWN + jj * 8 + 2 * (lane % 4), acc[i][jj]);
}

// The segment of column tile y, by selects, not by a dynamic index (which copies the parameter
// struct to the stack); *n0 its first weight row.
__device__ __forceinline__ int segment_of(const Segments& seg, unsigned y, int64_t bn, int64_t* n0) {
  const int s = (seg.count > 1 && y >= seg.tile_end[0]) + (seg.count > 2 && y >= seg.tile_end[1]);
  *n0 = static_cast<int64_t>(y - (s == 0 ? 0 : s == 1 ? seg.tile_end[0] : seg.tile_end[1])) * bn;
  return s;
}
template <typename T>
__device__ __forceinline__ T pick_field(const T (&field)[kMaxGemmSegments], int s) {
  return s == 0 ? field[0] : s == 1 ? field[1] : field[2];
}

template <class C, template <int, int> class BL>
__global__ void __launch_bounds__(C::kThreads) gemm_kernel(const bf16* __restrict__ a, Segments seg, int64_t M,
                                                           int64_t K, bool add) {
  extern __shared__ uint4 smem_raw[];
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  pdl_begin();
  const TileJob job{a,       nullptr, 1, static_cast<int64_t>(blockIdx.x) * C::kBM, M, pick_field(seg.w, s), n0,
                    pick_field(seg.n, s), K, pick_field(seg.c, s), nullptr, pick_field(seg.ldc, s), add};
  gemm_tile<C, BL>(job, reinterpret_cast<uint8_t*>(smem_raw));
}

// The grouped GEMM (MoE prefill): CTA x is tile tile_start[e0] + x of the routing's tile list
// (exits past tile_start[e1]); the tile's expert e picks the weights w + (e - e0) w_stride of each
// segment.
template <class C, template <int, int> class BL>
__global__ void __launch_bounds__(C::kThreads) gemm_grouped_kernel(const bf16* __restrict__ a, Segments seg,
                                                                   GemmGroups g, int64_t K, bool add) {
  extern __shared__ uint4 smem_raw[];
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  pdl_begin();  // the tile list is the routing's output
  const int tile = g.tile_start[g.e0] + static_cast<int>(blockIdx.x);
  if (tile >= g.tile_start[g.e1]) return;
  const int2 t = g.tiles[tile];  // {expert, first sorted row}
  const int64_t N = pick_field(seg.n, s);
  const TileJob job{a,
                    g.a_div ? g.sorted : nullptr,
                    g.a_div ? g.a_div : 1,
                    t.y,
                    g.offsets[t.x + 1],
                    pick_field(seg.w, s) + (t.x - g.e0) * pick_field(seg.w_stride, s),
                    n0,
                    N,
                    K,
                    pick_field(seg.c, s),
                    g.c_scatter ? g.sorted : nullptr,
                    pick_field(seg.ldc, s),
                    add};
  gemm_tile<C, BL>(job, reinterpret_cast<uint8_t*>(smem_raw));
}

template <class C, template <int, int> class BL>
cudaError_t launch(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  constexpr size_t smem = smem_bytes<C, BL>();
  constexpr auto kernel = gemm_kernel<C, BL>;
  BW24_CUDA_TRY(allow_smem<kernel>(smem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(gemm_kernel<C, BL>, grid, dim3(C::kThreads), smem, s, a, seg, m, k, add);
}

// The grouped GEMM's one configuration: 64-token tiles (kGemmGroupRows), as an expert sees ~32
// tokens of a 512-token pass over 128 experts with 8 picks each.
using GroupedTiles = Tiles<kGemmGroupRows, 128, 2, 4, 4>;

template <template <int, int> class BL>
cudaError_t launch_grouped(const bf16* a, const Segments& seg, const GemmGroups& g, int64_t max_rows, int64_t k,
                           bool add, cudaStream_t s) {
  using C = GroupedTiles;
  constexpr size_t smem = smem_bytes<C, BL>();
  constexpr auto kernel = gemm_grouped_kernel<C, BL>;
  BW24_CUDA_TRY(allow_smem<kernel>(smem));
  // Tiles of experts [e0, e1): at most one partial tile per expert beyond max_rows / kBM full ones.
  const dim3 grid(static_cast<unsigned>((max_rows + C::kBM - 1) / C::kBM + (g.e1 - g.e0)), seg.tile_end[seg.count - 1]);
  return launch_pdl(gemm_grouped_kernel<C, BL>, grid, dim3(C::kThreads), smem, s, a, seg, g, k, add);
}

// ---- The grouped GEMM over int8 activations (MoE prefill, Q4_K / Q6_K expert stacks) ----
// Why: the bf16 grouped GEMM expands every expert weight inside its tile (~600 M weights a layer
// for Qwen3-30B-A3B, 5-10 instructions each) and is bound by that expansion: ~400 us a launch, 48
// TFLOP/s (performance.md, round 7); on the wgmma tile it measured no faster. Here the weights stay
// quantized. A B fragment of mma m16n8k32 s8 is four bytes of a row's quants made int8 in a few
// bitwise operations, the activations are the int8 GEMV's (ActQ8: int8 in blocks of 32 with (d,
// d * sum q)), and each group of columns that shares a weight scale gets its integer product
// scaled once per output:
//   Q4_K, 32-column sub-block: sum_k w a = (d sc)_n (d_a S)_mn - (dmin m)_n (d_a sum q_a)_m
//   Q6_K, 16-column group:     sum_k w a = (d sc)_n (d_a S)_mn        (quants made signed, q - 32)
// i.e. a few instructions per output and group where the expansion spent ~6 per weight.
// Napkin math (Qwen3-30B-A3B, 512 tokens, Q4_K): gate-up 1536 CTAs x 32 stages x ~2300 warp
// instructions ~ 120 us of issue, down ~60 us; the weights (226 MB a layer) take ~65 us at 3.5
// TB/s. Measured on the H200 (bw24-microbench gemm_grouped): gate-up 369 us at 8f58af1 (469 with
// the expansion in the tile, 345 on bf16 experts read in place), down 208 us (256); ncu: issue
// bound (0.62 instructions a cycle a scheduler, SM 60 %, 25 % occupancy at 128 registers, 3.4 M
// local spill requests), i.e. ~3x the instructions counted here: the MMAs of the empty rows of
// partly full tiles, the per-stage copy and scale code, the float scaling of every k32 product.
// Skipping empty 16-row fragments (6e0964e): 305 / 180 us. One CTA a SM (no register cap, no
// spills) measured slower: 442 / 261 us. Next: activations with one scale per 256 columns, so the
// sub-block scales apply as integer multiply-adds (performance.md, round 8).
//
// Tile: 64 pairs (kGemmGroupRows) x 128 weight rows, 8 warps 2 x 4 of 32 x 32, K 64 a stage (a
// quarter superblock of every row). Shared per stage: A int8 [64][64] in the bf16 tiles' swizzle
// (64-byte rows), its (d, d sum) [64][2], the B staging [128][kRowBytes] (a row stride that puts
// a fragment load's 8 rows x 4 lanes in 32 distinct banks); per CTA the stage's weight scales
// [128][kScales], decoded once by the CTA, not per warp.

// Q4_K (file layout): stage kt is sub-blocks 2p, 2p + 1 (p = kt % 4) of block kt / 4, whose
// elements share the 32 qs bytes of pair p (low, high nibbles). Staged row: the head (d, dmin,
// scales) and those 32 bytes. Scales: (d sc, dmin m) of each sub-block.
// The weight row a thread copies in every stage: staged row r = tid % kBN (the CTA's 2 kBN threads
// cover every row twice, parts p0 = tid / kBN, p0 + 2, ... of it: warp-uniform), its first
// superblock's index rb = (n0 + r) * K / 256, and whether it is a row of the matrix (else
// zero-filled copies of row 0). Computed once: the stage loop only adds kt's offsets.
struct Q8Row {
  int r, p0;
  bool in;
  int64_t rb;
};

struct Q8LoadQ4K {
  static constexpr int kRowBytes = 48, kScales = 4;  // floats a row: 2 sub-blocks x (d sc, dmin m)
  static constexpr int kParts = 3;                    // 16-byte copies a row and stage: head, qs, qs
  __device__ static void issue(uint8_t* st, const uint8_t* w, const Q8Row& row, int64_t, int kt) {
    const uint8_t* blk = w + (row.rb + kt / 4) * 144;
#pragma unroll
    for (int c = 0; c < (kParts + 1) / 2; ++c) {
      const int p = row.p0 + 2 * c;
      if (p >= kParts) break;  // warp-uniform
      cp_async16(st + row.r * kRowBytes + p * 16, blk + (p == 0 ? 0 : 16 * p + 32 * (kt % 4)), row.in ? 16 : 0);
    }
  }
  // The thread's row, sub-block 2 (kt % 4) + p0.
  __device__ static void scales(const uint8_t* st, float* wsc, const Q8Row& row, int64_t, int kt) {
    const int h = row.p0;
    const uint8_t* head = st + row.r * kRowBytes;
    int sc, mn;
    scale_min_k4(2 * (kt % 4) + h, head + 4, &sc, &mn);
    wsc[row.r * kScales + 2 * h] = half_at(head) * sc;
    wsc[row.r * kScales + 2 * h + 1] = half_at(head + 2) * mn;
  }
  // acc (a lane's m16n8 fragment) += sub-block h of the stage: A fragment af, B row `row` (staged),
  // the lane's two A rows' (d, d sum) x[2] and its two columns' scales ws[2] (each kScales floats).
  __device__ static void product(float (&acc)[4], const uint32_t (&af)[4], const uint8_t* row, int h, int kt, int lane,
                                 const float2 (&x)[2], const float* const (&ws)[2]) {
    const uint8_t* q = row + 16 + 4 * (lane % 4);
    const uint32_t b0 = (*reinterpret_cast<const uint32_t*>(q) >> (4 * h)) & 0x0F0F0F0Fu;
    const uint32_t b1 = (*reinterpret_cast<const uint32_t*>(q + 16) >> (4 * h)) & 0x0F0F0F0Fu;
    int s[4] = {};
    mma_s8(s, af, b0, b1);
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // e: row half e / 2, column e % 2 (the m16n8 C layout)
      const float* v = ws[e % 2] + 2 * h;
      acc[e] = fmaf(v[0] * x[e / 2].x, static_cast<float>(s[e]), fmaf(-v[1], x[e / 2].y, acc[e]));
    }
  }
};

// Q6_K planes (lib/quant/repack.h: ql[128] | qh[64] | scales[16] | d of every block in turn):
// stage kt is sub-blocks s = 4 half + j, j = 2 (p % 2) + h (p = kt % 4, half = p / 2, h = 0, 1) of
// block kt / 4: both read the same qh bytes (bit pairs j) and the 64 ql bytes of half (nibble
// p % 2, 32 bytes each). Staged row: ql[64] | qh[32] | the block's 16 scales | the aligned 16
// bytes holding d | 16 bytes of padding (a 144-byte stride: conflict-free fragment loads).
// Scales: d sc of the stage's four 16-column groups (scale 4p + g).
struct Q8LoadQ6K {
  static constexpr int kRowBytes = 144, kScales = 4;
  // n_blocks: N K / 256, the superblocks of a plane (where the next plane starts).
  __device__ static void issue(uint8_t* st, const uint8_t* w, const Q8Row& row, int64_t n_blocks, int kt) {
    const int64_t gb = row.rb + kt / 4;
    const int half = (kt % 4) / 2;
    uint8_t* dst = st + row.r * kRowBytes;
    const int sz = row.in ? 16 : 0;
    // Parts p0 + 2c: c = 0, 1 the ql bytes, 2 the qh bytes, 3 the scales (p0 = 0) or d (p0 = 1).
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int p = row.p0 + 2 * c;
      cp_async16(dst + 16 * p, w + gb * 128 + 64 * half + 16 * p, sz);
    }
    cp_async16(dst + 16 * (4 + row.p0), w + n_blocks * 128 + gb * 64 + 32 * half + 16 * row.p0, sz);
    cp_async16(dst + 16 * (6 + row.p0), w + (row.p0 == 0 ? n_blocks * 192 + gb * 16 : q6k_d_offset(n_blocks, gb) & ~int64_t{15}), sz);
  }
  // The thread's row, groups 2 p0 and 2 p0 + 1 of the stage's four.
  __device__ static void scales(const uint8_t* st, float* wsc, const Q8Row& row, int64_t n_blocks, int kt) {
    const uint8_t* staged = st + row.r * kRowBytes;
    const float d = half_at(staged + 112 + (q6k_d_offset(n_blocks, row.rb + kt / 4) & 15));
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int g = 2 * row.p0 + q;
      wsc[row.r * kScales + g] = d * static_cast<int8_t>(staged[96 + 4 * (kt % 4) + g]);
    }
  }
  // As Q8LoadQ4K::product; the k32 step's two 16-column groups have their own scales, so it is two
  // MMAs, each with the other group's B half zero.
  __device__ static void product(float (&acc)[4], const uint32_t (&af)[4], const uint8_t* row, int h, int kt, int lane,
                                 const float2 (&x)[2], const float* const (&ws)[2]) {
    const int j = 2 * (kt % 2) + h, lo = 4 * (kt % 2);  // p % 2 = kt % 2: the ql nibble
    const uint8_t* ql = row + 32 * h + 4 * (lane % 4);
    const uint8_t* qh = row + 64 + 4 * (lane % 4);
    uint32_t b[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const uint32_t l = (*reinterpret_cast<const uint32_t*>(ql + 16 * q) >> lo) & 0x0F0F0F0Fu;
      const uint32_t hb = ((*reinterpret_cast<const uint32_t*>(qh + 16 * q) >> (2 * j)) & 0x03030303u) << 4;
      b[q] = __vsub4(l | hb, 0x20202020u);
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      int s[4] = {};
      mma_s8(s, af, q == 0 ? b[0] : 0u, q == 1 ? b[1] : 0u);
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[e] = fmaf(ws[e % 2][2 * h + q] * x[e / 2].x, static_cast<float>(s[e]), acc[e]);
    }
  }
};

template <class Q>
struct Q8Tiles {
  static constexpr int kBM = kGemmGroupRows, kBN = 128, kWarpsN = 4, kThreads = 256, kStages = 4;
  static constexpr int kWM = 32, kWN = 32, kMT = kWM / 16, kNT = kWN / 8;
  static constexpr int kABytes = kBM * 64, kDsBytes = kBM * 16, kBBytes = kBN * Q::kRowBytes;
  static constexpr int kStageBytes = kABytes + kDsBytes + kBBytes;
  static constexpr size_t kSmem = size_t{kStages} * kStageBytes + size_t{kBN} * Q::kScales * sizeof(float);
  static_assert(kStageBytes % 16 == 0, "16-byte slots");
};

// Two CTAs a SM (16 warps to hide the scale arithmetic's latency): ptxas caps the kernel at 128
// registers (48 / 80 bytes of stack for Q4_K / Q6_K; uncapped it takes 187 / 231).
template <class Q>
__global__ void __launch_bounds__(Q8Tiles<Q>::kThreads, 2) gemm_q8_grouped_kernel(ActQ8 a, Segments seg, GemmGroups g,
                                                                                  int64_t K, bool add) {
  using T = Q8Tiles<Q>;
  extern __shared__ uint4 smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_raw);
  float* wsc = reinterpret_cast<float*>(smem + T::kStages * T::kStageBytes);
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, T::kBN, &n0);
  pdl_begin();  // the tile list and the activations are the previous kernels' output
  const int tile = g.tile_start[g.e0] + static_cast<int>(blockIdx.x);
  if (tile >= g.tile_start[g.e1]) return;
  const int2 tl = g.tiles[tile];  // {expert, first sorted row}
  const int64_t m0 = tl.y, m_end = g.offsets[tl.x + 1], N = pick_field(seg.n, s);
  const uint8_t* w = pick_field(seg.w, s) + (tl.x - g.e0) * pick_field(seg.w_stride, s);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, wm = warp / T::kWarpsN, wn = warp % T::kWarpsN;
  const int64_t nblk = K / 32;
  auto a_row = [&](int64_t m) { return m < m_end ? (g.a_div ? g.sorted[m] / g.a_div : m) : int64_t{-1}; };
  // This thread's copies of a stage: A row tid / 4 chunk tid % 4; the (d, d sum) pair of row tid (tid < 64).
  const int ar = tid / 4, ac = tid % 4;
  const int64_t arow = a_row(m0 + ar), drow = tid < T::kBM ? a_row(m0 + tid) : -1;
  const int8_t* a_src = arow >= 0 ? a.q + arow * K + 16 * ac : a.q;        // + 64 kt a stage
  const float2* d_src = drow >= 0 ? a.ds + drow * nblk : a.ds;              // + 2 kt a stage
  static_assert(T::kThreads == 2 * T::kBN, "Q8Row: two threads a staged row");
  Q8Row row;
  row.r = tid % T::kBN;
  row.p0 = tid / T::kBN;
  row.in = n0 + row.r < N;
  row.rb = row.in ? (n0 + row.r) * (K / 256) : 0;
  const int64_t n_blocks = N * (K / 256);
  auto load_stage = [&](int slot, int kt) {
    uint8_t* st = smem + slot * T::kStageBytes;
    cp_async16(reinterpret_cast<bf16*>(st) + swz(ar, ac), a_src + (arow >= 0 ? 64 * kt : 0), arow >= 0 ? 16 : 0);
    if (tid < T::kBM) cp_async16(st + T::kABytes + 16 * tid, d_src + (drow >= 0 ? 2 * kt : 0), drow >= 0 ? 16 : 0);
    Q::issue(st + T::kABytes + T::kDsBytes, w, row, n_blocks, kt);
  };

  static_assert(T::kMT == 2, "multiply(): one or two 16-row fragments a warp");
  const int64_t warp_rows = m_end - (m0 + wm * T::kWM);  // rows of this warp that hold pairs
  const int kt_count = static_cast<int>(K / 64);
#pragma unroll
  for (int st = 0; st < T::kStages - 1; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }
  float acc[T::kMT][T::kNT][4] = {};
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<T::kStages - 2>();
    __syncthreads();  // stage kt landed for everyone; stage kt - 1 and the scales no longer read
    const uint8_t* st = smem + (kt % T::kStages) * T::kStageBytes;
    const uint8_t* sb = st + T::kABytes + T::kDsBytes;
    Q::scales(sb, wsc, row, n_blocks, kt);
    __syncthreads();
    if (kt + T::kStages - 1 < kt_count) load_stage((kt + T::kStages - 1) % T::kStages, kt + T::kStages - 1);
    cp_async_commit();
    const bf16* ta = reinterpret_cast<const bf16*>(st);
    const float2* ds = reinterpret_cast<const float2*>(st + T::kABytes);
    // kLive: the warp's 16-row fragments that hold pairs. An expert's last tile is mostly partly
    // full (Qwen3-30B-A3B at 512 tokens: ~32 pairs an expert), so warps skip the MMAs of empty rows.
    auto multiply = [&](auto live) {
      constexpr int kLive = decltype(live)::value;
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // the stage's 32-column halves
        uint32_t af[kLive][4];
        float2 x[kLive][2];
#pragma unroll
        for (int i = 0; i < kLive; ++i) {
          ldmatrix_x4(af[i], ta + swz(wm * T::kWM + 16 * i + lane % 16, 2 * h + lane / 16));
#pragma unroll
          for (int e = 0; e < 2; ++e) x[i][e] = ds[2 * (wm * T::kWM + 16 * i + lane / 4 + 8 * e) + h];
        }
#pragma unroll
        for (int jj = 0; jj < T::kNT; ++jj) {
          const int n = wn * T::kWN + 8 * jj;  // the n8 tile: B row n + lane / 4, C columns n + 2 (lane % 4) + {0, 1}
          const float* const ws[2] = {wsc + (n + 2 * (lane % 4)) * Q::kScales,
                                      wsc + (n + 2 * (lane % 4) + 1) * Q::kScales};
#pragma unroll
          for (int i = 0; i < kLive; ++i)
            Q::product(acc[i][jj], af[i], sb + (n + lane / 4) * Q::kRowBytes, h, kt, lane, x[i], ws);
        }
      }
    };
    if (warp_rows > 16) multiply(std::integral_constant<int, 2>{});
    else if (warp_rows > 0) multiply(std::integral_constant<int, 1>{});
  }
  cp_async_wait<0>();
  const TileJob j{nullptr, nullptr, 1, m0, m_end, w, n0, N, K, pick_field(seg.c, s),
                  g.c_scatter ? g.sorted : nullptr, pick_field(seg.ldc, s), add};
  const bool pairs = (N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < T::kMT; ++i)
#pragma unroll
    for (int jj = 0; jj < T::kNT; ++jj)
      store_c(j, pairs, wm * T::kWM + 16 * i + lane / 4, wn * T::kWN + 8 * jj + 2 * (lane % 4), acc[i][jj]);
}

template <class Q>
cudaError_t launch_q8_grouped(ActQ8 a, const Segments& seg, const GemmGroups& g, int64_t max_rows, int64_t k, bool add,
                              cudaStream_t s) {
  using T = Q8Tiles<Q>;
  constexpr auto kernel = gemm_q8_grouped_kernel<Q>;
  if constexpr (T::kSmem > 48 * 1024) BW24_CUDA_TRY(allow_smem<kernel>(T::kSmem));
  const dim3 grid(static_cast<unsigned>((max_rows + T::kBM - 1) / T::kBM + (g.e1 - g.e0)), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(T::kThreads), T::kSmem, s, a, seg, g, k, add);
}

// ---- The superblock-wide int8 grouped GEMM (Q4_K, Q6_K; activations with one scale a 256 columns) ----
// Why: the tile above scales every k32 product in float (I2F, FMUL, 2 FFMA an output a sub-block:
// 256 of the 329 instructions of a full warp-stage), because the activations' d changes every 32
// columns. With one d a superblock (rmsnorm_q8 per256, as llama.cpp's CPU Q8_K) the weight's
// integer group scales apply to the integer products, T += sc S (an IMAD an output and group),
// and the floats once a superblock: acc += d_a d T. Q4_K's min term, the sum over the 8 sub-blocks
// of (dmin m)_n (d_a sum q)_m, is a [64 x 8] x [8 x 128] product a superblock: three TF32 MMAs
// (m16n8k8, hi / lo splits: f32 accuracy) an output fragment instead of 8 FFMA an output. Q6_K's
// 16-column groups take an m16n8k16 MMA each (no zero halves) and have no min term.
// Napkin math (Qwen3-30B-A3B gate-up, Q4_K): ~17 SASS instructions a useful k32 MMA against ~29
// (per-sub-block, q8-lean), so ~260 -> ~150 us a launch.
//
// Tile: 64 pairs x 128 weight rows, 8 warps 2 x 4 of 32 x 32, a stage = one superblock (K 256):
// A int8 [64][256] (16-byte chunk c of row r at c ^ (r & 7): conflict-free ldmatrix), its (d, d
// sum q) [64][8], each weight row's superblock whole (W::kBRow bytes, a stride whose fragment
// loads' 8 rows x 4 lanes hit 32 banks). Two stages + the decoded scales: two CTAs a SM.
// tools/emulate/q8s_fragments.py rebuilds every lane's fragments (Q4_K) from this index math.

// Q4_K (file layout): the 144-byte block as it is: d, dmin, scales[12], qs[128] (pair p = sub-blocks
// 2p, 2p + 1 in the low / high nibbles of 32 bytes). Tables: sc [8][kBN], dmin m [kBN][8].
struct Q8sQ4K {
  static constexpr int kBRow = 144, kGroups = 8;  // staged bytes a row; scale groups
  static constexpr bool kMin = true;
  // Thread half p0 of a row's two: 16-byte parts p0, p0 + 2, ... of the 9 (superblock gb).
  __device__ static void copy_row(uint8_t* dst, const uint8_t* w, int64_t gb, int64_t, int p0, int sz) {
    const uint8_t* src = w + gb * 144;
#pragma unroll
    for (int c = 0; c < 5; ++c)
      if (p0 + 2 * c < 9) cp_async16(dst + 16 * (p0 + 2 * c), src + (sz ? 16 * (p0 + 2 * c) : 0), sz);
  }
  // Thread (row r, half p0): sub-blocks 4 p0 .. 4 p0 + 3 of the staged block.
  __device__ static void decode(const uint8_t* row, int r, int p0, int* sc_tab, float* min_tab, float* d_tab, int kBN) {
    const float dmin = half_at(row + 2);
#pragma unroll
    for (int j = 4 * p0; j < 4 * p0 + 4; ++j) {
      int sc, mn;
      scale_min_k4(j, row + 4, &sc, &mn);
      sc_tab[j * kBN + r] = sc;
      min_tab[r * 8 + j] = dmin * static_cast<float>(mn);
    }
    if (p0 == 0) d_tab[r] = half_at(row);
  }
  // tacc (a lane's m16n8 fragment) += the group-scaled products of sub-block sbk: A fragment af,
  // the B row of the lane (`row`, staged), the lane's two columns' scales (sc_tab at c).
  __device__ static void product(int (&tacc)[4], const uint32_t (&af)[4], const uint8_t* row, const int* sc_col, int sbk,
                                 int lane, int kBN) {
    const uint8_t* q = row + 16 + 32 * (sbk / 2) + 4 * (lane % 4);
    const uint32_t b0 = (*reinterpret_cast<const uint32_t*>(q) >> (4 * (sbk % 2))) & 0x0F0F0F0Fu;
    const uint32_t b1 = (*reinterpret_cast<const uint32_t*>(q + 16) >> (4 * (sbk % 2))) & 0x0F0F0F0Fu;
    const int2 c = *reinterpret_cast<const int2*>(sc_col + sbk * kBN);
    int sv[4] = {};
    mma_s8(sv, af, b0, b1);
    tacc[0] += c.x * sv[0];
    tacc[1] += c.y * sv[1];
    tacc[2] += c.x * sv[2];
    tacc[3] += c.y * sv[3];
  }
};

// Q6_K planes (lib/quant/repack.h): a row's superblock staged as ql[128] | qh[64] | scales[16] | the
// 16 bytes holding d (240-byte stride). Sub-block sbk: half h = sbk / 4, quarter u = sbk % 4,
// elements l + 32 u of the half (l < 32): ql[64 h + 32 (u % 2) + l] nibble u / 2, qh[32 h + l]
// bits 2u; signed q - 32. Groups 2 sbk, 2 sbk + 1 (16 columns each). Tables: sc [16][kBN].
struct Q8sQ6K {
  static constexpr int kBRow = 240, kGroups = 16;
  static constexpr bool kMin = false;
  // Thread half p0 of a row's two: ql chunks 4 p0 .. 4 p0 + 3, qh chunks 2 p0, 2 p0 + 1, then the
  // scales (p0 = 0) or d's 16-byte window (p0 = 1): seven copies each, their planes fixed.
  __device__ static void copy_row(uint8_t* dst, const uint8_t* w, int64_t gb, int64_t nb, int p0, int sz) {
    const uint8_t* ql = w + gb * 128 + 64 * p0;
    const uint8_t* qh = w + nb * 128 + gb * 64 + 32 * p0;
    const uint8_t* last = p0 == 0 ? w + nb * 192 + gb * 16 : w + (q6k_d_offset(nb, gb) & ~int64_t{15});
#pragma unroll
    for (int c = 0; c < 4; ++c) cp_async16(dst + 64 * p0 + 16 * c, sz ? ql + 16 * c : w, sz);
#pragma unroll
    for (int c = 0; c < 2; ++c) cp_async16(dst + 128 + 32 * p0 + 16 * c, sz ? qh + 16 * c : w, sz);
    cp_async16(dst + 192 + 16 * p0, sz ? last : w, sz);
  }
  // Thread (row r, half p0): groups 8 p0 .. 8 p0 + 7. d's position in its window: the caller's gb.
  __device__ static void decode6(const uint8_t* row, int r, int p0, int* sc_tab, float* d_tab, int kBN, int d_at) {
#pragma unroll
    for (int j = 8 * p0; j < 8 * p0 + 8; ++j) sc_tab[j * kBN + r] = static_cast<int8_t>(row[192 + j]);
    if (p0 == 0) d_tab[r] = half_at(row + 208 + d_at);
  }
  __device__ static void product(int (&tacc)[4], const uint32_t (&af)[4], const uint8_t* row, const int* sc_col, int sbk,
                                 int lane, int kBN) {
    const int h = sbk / 4, u = sbk % 4;
    const uint8_t* ql = row + 64 * h + 32 * (u % 2) + 4 * (lane % 4);
    const uint8_t* qh = row + 128 + 32 * h + 4 * (lane % 4);
    uint32_t b[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {  // k: columns 16 k + 4 (lane % 4) ..: group 2 sbk + k
      const uint32_t lo = (*reinterpret_cast<const uint32_t*>(ql + 16 * k) >> (4 * (u / 2))) & 0x0F0F0F0Fu;
      const uint32_t hi = ((*reinterpret_cast<const uint32_t*>(qh + 16 * k) >> (2 * u)) & 0x03030303u) << 4;
      b[k] = __vsub4(lo | hi, 0x20202020u);
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int2 c = *reinterpret_cast<const int2*>(sc_col + (2 * sbk + k) * kBN);
      const uint32_t a2[2] = {af[2 * k], af[2 * k + 1]};  // the k16 half k of the k32 A fragment
      int sv[4] = {};
      mma_s8_k16(sv, a2, b[k]);
      tacc[0] += c.x * sv[0];
      tacc[1] += c.y * sv[1];
      tacc[2] += c.x * sv[2];
      tacc[3] += c.y * sv[3];
    }
  }
};

template <class W>
struct Q8sTiles {
  static constexpr int kBM = kGemmGroupRows, kBN = 128, kWarpsN = 4, kThreads = 256, kStages = 2;
  static constexpr int kWM = 32, kWN = 32, kMT = kWM / 16, kNT = kWN / 8;
  static constexpr int kABytes = kBM * 256, kDsBytes = kBM * 8 * 8, kBBytes = kBN * W::kBRow;
  static constexpr int kStageBytes = kABytes + kDsBytes + kBBytes;
  // Per CTA, decoded from the stage's rows: sc [kGroups][kBN] (int32: a lane's two columns in one
  // 8-byte load), (Q4_K) dmin m [kBN][8] (f32), d [kBN].
  static constexpr int kScBytes = W::kGroups * kBN * 4, kMinBytes = W::kMin ? kBN * 8 * 4 : 0, kDBytes = kBN * 4;
  static constexpr size_t kSmem = size_t{kStages} * kStageBytes + kScBytes + kMinBytes + kDBytes;
  static_assert(kStageBytes % 16 == 0 && W::kBRow % 16 == 0 && kThreads == 2 * kBN, "16-byte slots; two threads a row");
};

// Byte offset of (row, 16-byte chunk) in an A stage: 256-byte rows, the chunk swizzled by row % 8.
__device__ __forceinline__ int a_off(int row, int chunk) { return row * 256 + ((chunk ^ (row & 7)) << 4); }

// c += a b for one m16n8k8 tile, tf32 operands (f32 bits; the MMA reads the top 19), f32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// x as tf32 hi + lo (hi: x rounded to tf32; lo: the rest, rounded): a product of two such pairs
// taken as hi hi + hi lo + lo hi is f32-accurate.
__device__ __forceinline__ void tf32_split(float x, uint32_t* hi, uint32_t* lo) {
  uint32_t h;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(h) : "f"(x));
  const float rest = x - __uint_as_float(h);
  uint32_t l;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(l) : "f"(rest));
  *hi = h;
  *lo = l;
}

template <class W>
__global__ void __launch_bounds__(Q8sTiles<W>::kThreads, 2) gemm_q8s_grouped_kernel(ActQ8 a, Segments seg,
                                                                                    GemmGroups g, int64_t K, bool add) {
  using T = Q8sTiles<W>;
  extern __shared__ uint4 smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_raw);
  int* sc_tab = reinterpret_cast<int*>(smem + T::kStages * T::kStageBytes);  // [kGroups][kBN]
  float* min_tab = reinterpret_cast<float*>(sc_tab + W::kGroups * T::kBN);    // [kBN][8]: dmin m (Q4_K)
  float* d_tab = min_tab + (W::kMin ? T::kBN * 8 : 0);                       // [kBN]
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, T::kBN, &n0);
  pdl_begin();  // the tile list and the activations are the previous kernels' output
  const int tile = g.tile_start[g.e0] + static_cast<int>(blockIdx.x);
  if (tile >= g.tile_start[g.e1]) return;
  const int2 tl = g.tiles[tile];  // {expert, first sorted row}
  const int64_t m0 = tl.y, m_end = g.offsets[tl.x + 1], N = pick_field(seg.n, s);
  const uint8_t* w = pick_field(seg.w, s) + (tl.x - g.e0) * pick_field(seg.w_stride, s);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, wm = warp / T::kWarpsN, wn = warp % T::kWarpsN;
  const int64_t nblk = K / 32, n_blocks = N * (K / 256);
  auto a_row = [&](int64_t m) { return m < m_end ? (g.a_div ? g.sorted[m] / g.a_div : m) : int64_t{-1}; };
  // This thread's copies of a stage: A row tid / 4, chunks tid % 4 + 4 c (c < 4), and 16 bytes of
  // that row's (d, d sum q); weight row tid % 128, its 16-byte parts p0 + 2 c.
  const int ar = tid / 4, ac = tid % 4;
  const int64_t arow = a_row(m0 + ar);
  const int8_t* a_src = arow >= 0 ? a.q + arow * K + 16 * ac : a.q;
  const float2* d_src = arow >= 0 ? a.ds + arow * nblk + 2 * ac : a.ds;
  const int br = tid % T::kBN, p0 = tid / T::kBN;
  const bool b_in = n0 + br < N;
  const int64_t rb = b_in ? (n0 + br) * (K / 256) : 0;  // the row's first superblock
  auto load_stage = [&](int slot, int kt) {
    uint8_t* st = smem + slot * T::kStageBytes;
#pragma unroll
    for (int c = 0; c < 4; ++c)
      cp_async16(st + a_off(ar, ac + 4 * c), a_src + (arow >= 0 ? 256 * kt + 64 * c : 0), arow >= 0 ? 16 : 0);
    cp_async16(st + T::kABytes + ar * 64 + 16 * ac, d_src + (arow >= 0 ? 8 * kt : 0), arow >= 0 ? 16 : 0);
    W::copy_row(st + T::kABytes + T::kDsBytes + br * W::kBRow, w, rb + kt, n_blocks, p0, b_in ? 16 : 0);
  };

  static_assert(T::kMT == 2, "one or two 16-row fragments a warp");
  const int64_t warp_rows = m_end - (m0 + wm * T::kWM);  // rows of this warp that hold pairs
  const int kt_count = static_cast<int>(K / 256);
  load_stage(0, 0);
  cp_async_commit();
  float acc[T::kMT][T::kNT][4] = {};
  for (int kt = 0; kt < kt_count; ++kt) {
    __syncthreads();  // the other slot and the scale tables are no longer read
    if (kt + 1 < kt_count) load_stage((kt + 1) % T::kStages, kt + 1);
    cp_async_commit();
    cp_async_wait<1>();  // this thread's copies of superblock kt landed
    __syncthreads();
    const uint8_t* st = smem + (kt % T::kStages) * T::kStageBytes;
    const float2* ds = reinterpret_cast<const float2*>(st + T::kABytes);  // [64][8]
    const uint8_t* sb = st + T::kABytes + T::kDsBytes;
    if constexpr (W::kMin)
      W::decode(sb + br * W::kBRow, br, p0, sc_tab, min_tab, d_tab, T::kBN);
    else
      W::decode6(sb + br * W::kBRow, br, p0, sc_tab, d_tab, T::kBN, static_cast<int>(q6k_d_offset(n_blocks, rb + kt) & 15));
    __syncthreads();
    const uint8_t* ta = st;
    // kLive: the warp's 16-row fragments that hold pairs (1 or 2: two instances, no predicated MMAs).
    auto multiply = [&](auto live) {
      constexpr int kLive = decltype(live)::value;
      int tacc[kLive][T::kNT][4] = {};
#pragma unroll
      for (int sbk = 0; sbk < 8; ++sbk) {  // sub-block: k32 columns 32 sbk.., A chunks 2 sbk, 2 sbk + 1
        uint32_t af[kLive][4];
#pragma unroll
        for (int i = 0; i < kLive; ++i)
          ldmatrix_x4(af[i], ta + a_off(wm * T::kWM + 16 * i + lane % 16, 2 * sbk + lane / 16));
#pragma unroll
        for (int jj = 0; jj < T::kNT; ++jj) {
          const int n = wn * T::kWN + 8 * jj;  // B row n + lane / 4; C columns n + 2 (lane % 4) + {0, 1}
          const uint8_t* row = sb + (n + lane / 4) * W::kBRow;
          const int* sc_col = sc_tab + n + 2 * (lane % 4);
#pragma unroll
          for (int i = 0; i < kLive; ++i) W::product(tacc[i][jj], af[i], row, sc_col, sbk, lane, T::kBN);
        }
      }
      // acc += d_a d T; Q4_K: acc -= (d_a sum q)[rows][8] (dmin m)[cols][8]^T on the tensor cores
      // (B of m16n8k8: (k t, col n + lane / 4), (k t + 4, same), split once for both fragments).
      [[maybe_unused]] uint32_t bh[T::kNT][2], bl[T::kNT][2];
      if constexpr (W::kMin) {
#pragma unroll
        for (int jj = 0; jj < T::kNT; ++jj) {
          const float* mrow = min_tab + (wn * T::kWN + 8 * jj + lane / 4) * 8 + lane % 4;
          tf32_split(mrow[0], &bh[jj][0], &bl[jj][0]);
          tf32_split(mrow[4], &bh[jj][1], &bl[jj][1]);
        }
      }
#pragma unroll
      for (int i = 0; i < kLive; ++i) {
        const int r0 = wm * T::kWM + 16 * i + lane / 4;
        const float da[2] = {ds[r0 * 8].x, ds[(r0 + 8) * 8].x};
        [[maybe_unused]] uint32_t yh[4], yl[4];  // A of m16n8k8: (r0, t), (r0 + 8, t), (r0, t + 4), (r0 + 8, t + 4), t = lane % 4
        if constexpr (W::kMin) {
          tf32_split(-ds[r0 * 8 + lane % 4].y, &yh[0], &yl[0]);
          tf32_split(-ds[(r0 + 8) * 8 + lane % 4].y, &yh[1], &yl[1]);
          tf32_split(-ds[r0 * 8 + lane % 4 + 4].y, &yh[2], &yl[2]);
          tf32_split(-ds[(r0 + 8) * 8 + lane % 4 + 4].y, &yh[3], &yl[3]);
        }
#pragma unroll
        for (int jj = 0; jj < T::kNT; ++jj) {
          const int c = wn * T::kWN + 8 * jj + 2 * (lane % 4);
          const float dc[2] = {d_tab[c], d_tab[c + 1]};
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[i][jj][e] = fmaf(da[e / 2] * dc[e % 2], static_cast<float>(tacc[i][jj][e]), acc[i][jj][e]);
          if constexpr (W::kMin) {
            mma_tf32(acc[i][jj], yl, bh[jj][0], bh[jj][1]);
            mma_tf32(acc[i][jj], yh, bl[jj][0], bl[jj][1]);
            mma_tf32(acc[i][jj], yh, bh[jj][0], bh[jj][1]);
          }
        }
      }
    };
    if (warp_rows > 16) multiply(std::integral_constant<int, 2>{});
    else if (warp_rows > 0) multiply(std::integral_constant<int, 1>{});
  }
  cp_async_wait<0>();
  const TileJob j{nullptr, nullptr, 1, m0, m_end, w, n0, N, K, pick_field(seg.c, s),
                  g.c_scatter ? g.sorted : nullptr, pick_field(seg.ldc, s), add};
  const bool pairs = (N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < T::kMT; ++i)
#pragma unroll
    for (int jj = 0; jj < T::kNT; ++jj)
      store_c(j, pairs, wm * T::kWM + 16 * i + lane / 4, wn * T::kWN + 8 * jj + 2 * (lane % 4), acc[i][jj]);
}

template <class W>
cudaError_t launch_q8s_grouped(ActQ8 a, const Segments& seg, const GemmGroups& g, int64_t max_rows, int64_t k, bool add,
                               cudaStream_t s) {
  using T = Q8sTiles<W>;
  constexpr auto kernel = gemm_q8s_grouped_kernel<W>;
  BW24_CUDA_TRY(allow_smem<kernel>(T::kSmem));
  const dim3 grid(static_cast<unsigned>((max_rows + T::kBM - 1) / T::kBM + (g.e1 - g.e0)), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(T::kThreads), T::kSmem, s, a, seg, g, k, add);
}

// ---- sm_90a: the warpgroup MMA (wgmma) path of the dense GEMM ----
// Why: at M = 512 the mma.sync kernel above reaches 260-370 TFLOP/s of the ~660 mma.sync can give
// on sm_90; wgmma reads both operands straight from shared memory (no ldmatrix, no register
// fragments of A and B), one instruction a 64 x BN x 16 product for a warpgroup (4 warps), and
// peaks near ~990 TFLOP/s. Napkin math, Qwen3-8B at M = 512: 8.2 TFLOP a pass, ~14 ms at 600
// TFLOP/s against ~22 ms measured on mma.sync.
//
// A CTA is two warpgroups (256 threads), each 64 token rows x BN weight rows of C; K advances 64 a
// stage (a row's 128 bytes). Every thread issues cp.async for a share of each stage (no producer
// warps: the copies are asynchronous, issuing them costs 8-12 instructions a stage), then
// `fence.proxy.async` makes its copies visible to the tensor cores' (async proxy) reads.
//
// Shared layout: the 128-byte swizzle wgmma reads K-major tiles in: row r of a tile at r * 128
// bytes, its 16-byte chunk c at chunk position c ^ (r % 8); 8-row atoms 1024 bytes apart (the
// descriptor's stride), each tile 1024-byte aligned. The k16 steps inside a 64-wide stage advance
// the descriptor's start address by 32 bytes (the swizzle applies to the final address bits).
//
// Pipeline: kStages slots, loads run kStages - 2 stages ahead. The wgmma group of stage kt stays in
// flight while stage kt + 1 issues (wgmma.wait_group 1), so the slot a load overwrites (stage
// kt - 2's) is free once every thread has passed the barrier of iteration kt.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BW24_WGMMA 1
#else
#define BW24_WGMMA 0
#endif

template <int BN, int Stages>
struct WgTiles {
  static constexpr int kBM = 128, kBN = BN, kBK = 64, kStages = Stages, kThreads = 256;
  static constexpr int kAhead = Stages - 2;  // stages loading ahead of the one the MMAs read
  static constexpr int kTileA = kBM * kBK, kTileB = kBN * kBK;  // bf16 elements
  static constexpr size_t kSmem = size_t{Stages} * (kTileA + kTileB) * 2 + 1024;  // + the 1024 alignment
  static_assert(BN == 128 || BN == 256, "wgmma_n128 / wgmma_n256");
  static_assert(Stages >= 3, "a slot read, a slot in flight, one loading");
};

// Element offset of (row, 16-byte chunk) in a 128-byte-swizzled [rows][64] tile.
__device__ __forceinline__ int sw128(int row, int chunk) { return row * 64 + ((chunk ^ (row & 7)) << 3); }

// The wgmma shared-memory descriptor of a K-major tile in the 128-byte swizzle: start address
// (bits 0-13, in 16 bytes), leading byte offset 16 (unused by swizzled K-major), stride byte
// offset 1024 (bits 32-45: one 8-row atom to the next), layout type 1 = 128-byte swizzle.
__device__ __forceinline__ uint64_t wg_desc(const bf16* tile) {
  const uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

#if BW24_WGMMA
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n) : "memory");
}
// The generic-proxy writes (cp.async) of this thread visible to the async proxy (wgmma's reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// D (64 x N, f32) += A (64 x 16) B (N x 16)^T, both bf16 from shared memory through descriptors.
// Thread t of the warpgroup holds d[4 i + 2 h + e] = D[16 (t / 32) + (t % 32) / 4 + 8 h][8 i + 2 (t % 4) + e].
// The accumulator operands of the asm below, eight and sixty-four at a time.
#define BW24_WG_D8(i)                                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define BW24_WG_D64(i)                                                                                     \
  BW24_WG_D8(i), BW24_WG_D8(i + 8), BW24_WG_D8(i + 16), BW24_WG_D8(i + 24), BW24_WG_D8(i + 32), BW24_WG_D8(i + 40), \
      BW24_WG_D8(i + 48), BW24_WG_D8(i + 56)
__device__ __forceinline__ void wgmma_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, 1, 1, 1, 0, 0;\n"
      : BW24_WG_D64(0)
      : "l"(desc_a), "l"(desc_b));
}
__device__ __forceinline__ void wgmma_n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, "
      "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, "
      "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, 1, 1, 1, 0, 0;\n"
      : BW24_WG_D64(0), BW24_WG_D64(64)
      : "l"(desc_a), "l"(desc_b));
}
#undef BW24_WG_D64
#undef BW24_WG_D8
template <int BN>
__device__ __forceinline__ void wgmma_bn(float (&d)[BN / 2], uint64_t da, uint64_t db) {
  if constexpr (BN == 128) wgmma_n128(d, da, db);
  else wgmma_n256(d, da, db);
}
#endif

// The epilogue of a warpgroup's 64 x BN accumulators (token rows m_off.. of the job's tile): thread
// t holds m16n8 fragment i at d[4 i ..], row 16 (t / 32 % 4) + (t % 32) / 4 (+ 8), columns 8 i +
// 2 (t % 4) (+ 1), which store_c writes as it does the mma.sync tiles'.
template <int n>
__device__ __forceinline__ void wg_store(const float (&d)[n], const TileJob& j, int m_off) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const bool pairs = (j.N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < n / 4; ++i) store_c(j, pairs, m_off + 16 * warp + lane / 4, 8 * i + 2 * (lane % 4), d + 4 * i);
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) gemm_wg_kernel(const bf16* __restrict__ a, Segments seg, int64_t M,
                                                                 int64_t K, bool add) {
#if BW24_WGMMA
  extern __shared__ uint4 smem_raw[];
  bf16* sa = reinterpret_cast<bf16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  bf16* sb = sa + C::kStages * C::kTileA;
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * C::kBM, N = pick_field(seg.n, s), ldc = pick_field(seg.ldc, s);
  const bf16* w = reinterpret_cast<const bf16*>(pick_field(seg.w, s));
  float* c = pick_field(seg.c, s);
  pdl_begin();
  const int tid = threadIdx.x, wg = tid / 128;

  // This thread's chunks of a stage: A rows m0 + r (zeros past M), B rows n0 + r (zeros past N).
  constexpr int kAIters = C::kBM * 8 / C::kThreads, kBIters = C::kBN * 8 / C::kThreads;
  const bf16* arow[kAIters];
  const bf16* brow[kBIters];
#pragma unroll
  for (int it = 0; it < kAIters; ++it) {
    const int64_t m = m0 + (tid + it * C::kThreads) / 8;
    arow[it] = m < M ? a + m * K : nullptr;
  }
#pragma unroll
  for (int it = 0; it < kBIters; ++it) {
    const int64_t n = n0 + (tid + it * C::kThreads) / 8;
    brow[it] = n < N ? w + n * K : nullptr;
  }
  auto load_stage = [&](int slot, int kt) {
    const int64_t k0 = int64_t{kt} * C::kBK;
    bf16* ta = sa + slot * C::kTileA;
    bf16* tb = sb + slot * C::kTileB;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * C::kThreads, r = i / 8, ch = i % 8;
      cp_async16(ta + sw128(r, ch), arow[it] ? arow[it] + k0 + 8 * ch : a, arow[it] ? 16 : 0);
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * C::kThreads, r = i / 8, ch = i % 8;
      cp_async16(tb + sw128(r, ch), brow[it] ? brow[it] + k0 + 8 * ch : w, brow[it] ? 16 : 0);
    }
  };

  const int kt_count = static_cast<int>(K / C::kBK);
#pragma unroll
  for (int st = 0; st < C::kAhead; ++st) {
    if (st < kt_count) load_stage(st, st);
    cp_async_commit();
  }
  float acc[C::kBN / 2];
#pragma unroll
  for (int i = 0; i < C::kBN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<C::kAhead - 1>();  // this thread's copies of stage kt landed
    fence_proxy_async();
    __syncthreads();  // everyone's copies of stage kt landed; every warpgroup is done with stage kt - 2
    if (kt + C::kAhead < kt_count) load_stage((kt + C::kAhead) % C::kStages, kt + C::kAhead);
    cp_async_commit();
    const int slot = kt % C::kStages;
    const uint64_t da = wg_desc(sa + slot * C::kTileA + wg * 64 * C::kBK), db = wg_desc(sb + slot * C::kTileB);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C::kBK / 16; ++kk) wgmma_bn<C::kBN>(acc, da + 2 * kk, db + 2 * kk);
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  cp_async_wait<0>();

  // Epilogue: the wgmma accumulator layout (see wgmma_n128) is m16n8 fragments, 4 floats each.
  wg_store(acc, TileJob{nullptr, nullptr, 1, m0, M, nullptr, n0, N, K, c, nullptr, ldc, add}, wg * 64);
#else
  __trap();  // launched only where wgmma_supported() (an sm_90a build on an sm_90 device)
#endif
}

// Whether the wgmma kernel runs here for this K: an sm_90a build on an sm_90 device, whole 64-column stages.
bool wgmma_runs(int64_t k) { return k % 64 == 0 && wgmma_supported(); }

template <class C>
cudaError_t launch_wg(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  static_assert(C::kBK == 64, "wgmma_runs: 64-column stages");
  if (!wgmma_runs(k)) return cudaErrorNotSupported;
  constexpr auto kernel = gemm_wg_kernel<C>;
  BW24_CUDA_TRY(allow_smem<kernel>(C::kSmem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(C::kThreads), C::kSmem, s, a, seg, m, k, add);
}

// ---- sm_90a: the same wgmma tile fed by the tensor memory accelerator ----
// Why: the cp.async kernel above spends its warps' issue slots on the copies (8-12 cp.async and
// their address arithmetic a thread a stage) and a CTA-wide barrier a stage; it measured 390-510
// TFLOP/s. Here one producer thread issues a stage as two TMA tensor copies (A 128 x 64, B BN x
// 64, written in the 128-byte swizzle by the copy engine itself) completed on the stage's `full`
// mbarrier; two consumer warpgroups only wait on it, multiply, and release the slot on its `empty`
// mbarrier once their MMAs of it are done (one wgmma group stays in flight). No CTA barrier in
// the main loop. This is the warp-specialized mainloop of kernels-hopper.md.
//
// The tensor maps (cuTensorMapEncodeTiled through the runtime's driver entry point) are built on
// the host for every launch: A [M][K] and each segment's W [n][K], bf16, boxes of 64 columns (128
// bytes: the swizzle span) by 128 / BN rows, out-of-range rows read as zeros. They travel as
// __grid_constant__ kernel parameters (128 bytes each).
struct TmaMaps {
  CUtensorMap a;
  CUtensorMap b[kMaxGemmSegments];
};

template <int BN, int Stages>
struct TmaTiles {
  static constexpr int kBM = 128, kBN = BN, kStages = Stages, kThreads = 384;  // producer + 2 consumer warpgroups
  static constexpr int kTileA = kBM * 64, kTileB = BN * 64;                    // bf16 elements
  static constexpr uint32_t kStageBytes = (kTileA + kTileB) * 2;
  static constexpr size_t kSmem = size_t{Stages} * kStageBytes + 2 * Stages * sizeof(uint64_t) + 1024;
  static_assert(BN == 128 || BN == 256, "wgmma_n128 / wgmma_n256");
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) gemm_tma_kernel(const __grid_constant__ TmaMaps maps, Segments seg,
                                                                  int64_t M, int64_t K, bool add) {
#if BW24_WGMMA
  extern __shared__ uint4 smem_raw[];
  bf16* sa = reinterpret_cast<bf16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  bf16* sb = sa + C::kStages * C::kTileA;
  uint64_t* full = reinterpret_cast<uint64_t*>(sb + C::kStages * C::kTileB);
  uint64_t* empty = full + C::kStages;
  int64_t n0;
  const int s = segment_of(seg, blockIdx.y, C::kBN, &n0);
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * C::kBM;
  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    for (int i = 0; i < C::kStages; ++i) {
      mbar_init(&full[i], 1);   // the producer's arrive.expect_tx; the bytes complete the phase
      mbar_init(&empty[i], 2);  // one arrival a consumer warpgroup
    }
    mbar_init_fence();
  }
  __syncthreads();
  pdl_begin();  // A is the previous kernel's output
  const int kt_count = static_cast<int>(K / 64);
  if (wg == 0) {  // producer: one thread issues every stage
    if (tid == 0) {
      const CUtensorMap* mb = s == 0 ? &maps.b[0] : s == 1 ? &maps.b[1] : &maps.b[2];
      for (int kt = 0; kt < kt_count; ++kt) {
        const int slot = kt % C::kStages;
        if (kt >= C::kStages) mbar_wait(&empty[slot], ((kt / C::kStages) - 1) & 1);  // its last use released
        mbar_arrive_expect_tx(&full[slot], C::kStageBytes);
        tensor_copy_2d(sa + slot * C::kTileA, &maps.a, 64 * kt, static_cast<int>(m0), &full[slot]);
        tensor_copy_2d(sb + slot * C::kTileB, mb, 64 * kt, static_cast<int>(n0), &full[slot]);
      }
    }
    return;  // no CTA barrier follows
  }
  const int cw = wg - 1;  // consumer warpgroup: token rows m0 + 64 cw .. + 63, all BN columns
  float acc[C::kBN / 2];
#pragma unroll
  for (int i = 0; i < C::kBN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < kt_count; ++kt) {
    const int slot = kt % C::kStages;
    mbar_wait(&full[slot], (kt / C::kStages) & 1);
    const uint64_t da = wg_desc(sa + slot * C::kTileA + cw * 64 * 64), db = wg_desc(sb + slot * C::kTileB);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wgmma_bn<C::kBN>(acc, da + 2 * kk, db + 2 * kk);
    wgmma_commit();
    wgmma_wait<1>();  // stage kt - 1's MMAs are done: its slot may be refilled
    if (kt > 0 && tid % 128 == 0) mbar_arrive(&empty[(kt - 1) % C::kStages]);
  }
  wgmma_wait<0>();

  const int64_t N = pick_field(seg.n, s);
  wg_store(acc, TileJob{nullptr, nullptr, 1, m0, M, nullptr, n0, N, K, pick_field(seg.c, s), nullptr,
                        pick_field(seg.ldc, s), add}, cw * 64);
#else
  __trap();  // launched only where wgmma_supported() (an sm_90a build on an sm_90 device)
#endif
}

// cuTensorMapEncodeTiled from the driver, through the runtime (no libcuda link); null if absent.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
EncodeTiledFn encode_tiled() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiledFn>(nullptr);
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

// The map of a bf16 [rows][cols] row-major matrix read in boxes of 64 columns x box_rows rows, in
// the 128-byte swizzle; false if the driver refuses it (alignment, sizes).
bool encode_bf16_2d(CUtensorMap* map, const void* base, int64_t cols, int64_t rows, int box_rows) {
  const EncodeTiledFn fn = encode_tiled();
  if (!fn) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)}, elem[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, elem,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <class C>
cudaError_t launch_tma(const bf16* a, const Segments& seg, int64_t m, int64_t k, bool add, cudaStream_t s) {
  if (!wgmma_runs(k) || m > INT32_MAX) return cudaErrorNotSupported;
  // A map the driver refuses (no entry point, a base it cannot take): the cp.async-fed kernel of
  // the same tile instead.
  using Fallback = WgTiles<C::kBN, C::kBN == 128 ? 5 : 4>;
  TmaMaps maps;
  bool encoded = encode_bf16_2d(&maps.a, a, k, m, C::kBM);
  for (int i = 0; encoded && i < seg.count; ++i) encoded = encode_bf16_2d(&maps.b[i], seg.w[i], k, seg.n[i], C::kBN);
  if (!encoded) return launch_wg<Fallback>(a, seg, m, k, add, s);
  for (int i = seg.count; i < kMaxGemmSegments; ++i) maps.b[i] = maps.b[0];  // unused: never read, kept defined
  constexpr auto kernel = gemm_tma_kernel<C>;
  BW24_CUDA_TRY(allow_smem<kernel>(C::kSmem));
  const dim3 grid(static_cast<unsigned>((m + C::kBM - 1) / C::kBM), seg.tile_end[seg.count - 1]);
  return launch_pdl(kernel, grid, dim3(C::kThreads), C::kSmem, s, maps, seg, m, k, add);
}

// The dispatch table of the GEMM family. Microbenchmarks (bw24-microbench gemm_bf16_config, Qwen3-8B
// shapes at M = 512) chose the entries and the rule in pick(). Dense GEMMs take bf16 weights only:
// the fused expansion measured slower there (lib/engine/cuda_runner.cpp fused_type).
struct Config {
  const char* name;
  int bm, bn;
  cudaError_t (*launch)(const bf16*, const Segments&, int64_t, int64_t, bool, cudaStream_t);
  bool wgmma;  // runs where wgmma_runs(K)
};
constexpr Config kConfigs[] = {
    {"64x128 warps 2x4 (32x32) 4 stages", 64, 128, launch<Tiles<64, 128, 2, 4, 4>, LoadBf16>, false},
    {"128x128 warps 2x4 (64x32) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 4, 4>, LoadBf16>, false},
    {"128x128 warps 2x2 (64x64) 4 stages", 128, 128, launch<Tiles<128, 128, 2, 2, 4>, LoadBf16>, false},
    {"128x256 warps 2x4 (64x64) 3 stages", 128, 256, launch<Tiles<128, 256, 2, 4, 3>, LoadBf16>, false},
    {"256x128 warps 4x2 (64x64) 3 stages", 256, 128, launch<Tiles<256, 128, 4, 2, 3>, LoadBf16>, false},
    {"wgmma 128x128 5 stages", 128, 128, launch_wg<WgTiles<128, 5>>, true},
    {"wgmma 128x256 4 stages", 128, 256, launch_wg<WgTiles<256, 4>>, true},
    {"wgmma TMA 128x128 6 stages", 128, 128, launch_tma<TmaTiles<128, 6>>, true},
    {"wgmma TMA 128x256 4 stages", 128, 256, launch_tma<TmaTiles<256, 4>>, true},
};
constexpr int kConfigCount = sizeof(kConfigs) / sizeof(kConfigs[0]);


// On sm_90 (M > 64, K % 64 == 0) the TMA-fed wgmma kernel: 128 x 256 tiles where they still make
// ~0.7 of a wave, else 128 x 128 (fewer, wider CTAs beat a second partial wave). Measured on the
// H200 at a2623eb (cp.async rows) and a6acec4 (TMA rows) (M = 512 unless noted; us; N x K):
//   config                      6144x4096  4096x4096  24576x4096  4096x12288  M=2048 4096x4096
//   mma.sync 128x128 (64x64)      95.6       66.2       305         181          202
//   wgmma 128x128, 5 stages       74.8       40.4       236         113          155
//   wgmma 128x128, 3 stages x2    80.5       70.8       251         193          161   (2 CTAs a SM; dropped)
//   wgmma 128x256, 4 stages       64.5       64.0       207         167          135
//   TMA 128x128, 6 stages         57.6       33.2        -           -            -
//   pick (TMA; 8 | 7 | 8 | 7 | 8) 52.4       33.0       171        90.2          108   (492-634 TFLOP/s)
// Elsewhere 64-token tiles when 128-token tiles would leave half the SMs idle (small M or narrow
// N); else 128 x 128 with four 64 x 64 warps. Measured on the H200 at 147640f1 (us):
//   config                      6144x4096  4096x4096  24576x4096  4096x12288  M=2048 4096x4096
//   64x128, 2x4 warps             98.8       67.3       383         192          251
//   128x128, 2x4 warps (64x32)    94.2       66.5       296         180          196
//   128x128, 2x2 warps (64x64)    90.1       66.2       282         181          186   <- default
//   128x256 / 256x128, 64x64     ~122       121        ~356        344          240   (64 CTAs: 1/SM)
// The 64x64 warp tile issues 8 ldmatrix per 32 mma (64x32: 6 per 16).
int pick(int64_t m, int64_t n_total, int64_t k) {
  const int64_t m_tiles = (m + 127) / 128;
  if (m > 64 && wgmma_runs(k))
    return 10 * m_tiles * ((n_total + 255) / 256) >= 7 * sm_count() ? 8 : 7;
  const int64_t ctas128 = m_tiles * ((n_total + 127) / 128);
  return (m <= 64 || 2 * ctas128 < sm_count()) ? 0 : 2;
}

// The segment table of a launch with column tiles of bn rows; false if a segment is malformed.
bool make_segments(const GemmSegment* segs, int n_segs, int64_t bn, Segments* seg) {
  if (n_segs < 1 || n_segs > kMaxGemmSegments) return false;
  *seg = Segments{};
  unsigned tiles = 0;
  for (int i = 0; i < n_segs; ++i) {
    const GemmSegment& g = segs[i];
    // 16-byte copies: weights and the stride between experts 16-byte aligned.
    if (g.n <= 0 || g.ldc < g.n || g.w_stride < 0 || g.w_stride % 16 != 0 || reinterpret_cast<uintptr_t>(g.w) % 16 != 0)
      return false;
    seg->w[i] = static_cast<const uint8_t*>(g.w);
    seg->c[i] = g.c;
    seg->n[i] = g.n;
    seg->ldc[i] = g.ldc;
    seg->w_stride[i] = g.w_stride;
    tiles += static_cast<unsigned>((g.n + bn - 1) / bn);
    seg->tile_end[i] = tiles;
  }
  seg->count = n_segs;
  return true;
}

}  // namespace

bool gemm_fused_supports(uint32_t t) { return t == kQ4_K || t == kQ6_K; }

int gemm_bf16_config_count() { return kConfigCount; }
const char* gemm_bf16_config_name(int config) {
  return config >= 0 && config < kConfigCount ? kConfigs[config].name : "?";
}
bool gemm_bf16_config_runs(int config, int64_t k) {
  return config < 0 || (config < kConfigCount && (!kConfigs[config].wgmma || wgmma_runs(k)));
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
  const Config& cfg = kConfigs[config >= 0 ? config : pick(m, n_total, k)];
  Segments seg;
  if (!make_segments(segs, n_segs, cfg.bn, &seg)) return cudaErrorInvalidValue;
  return cfg.launch(a, seg, m, k, out == GemvOut::kAdd, s);
}

cudaError_t gemm_grouped(const bf16* a, const GemmSegment* segs, int n_segs, uint32_t w_type, const GemmGroups& groups,
                         int64_t max_rows, int64_t k, GemvOut out, cudaStream_t s) {
  if (max_rows <= 0 || groups.e1 <= groups.e0) return cudaSuccess;
  Segments seg;
  if (k <= 0 || k % kBK != 0 || out == GemvOut::kGateUp || groups.e0 < 0 || groups.a_div < 0 ||
      (w_type != kBF16 && k % 256 != 0) || !make_segments(segs, n_segs, GroupedTiles::kBN, &seg))
    return cudaErrorInvalidValue;
  const bool add = out == GemvOut::kAdd;
  switch (w_type) {
    case kBF16: return launch_grouped<LoadBf16>(a, seg, groups, max_rows, k, add, s);
    case kQ4_K: return launch_grouped<LoadQ4K>(a, seg, groups, max_rows, k, add, s);
    case kQ6_K: return launch_grouped<LoadQ6K>(a, seg, groups, max_rows, k, add, s);
    default: return cudaErrorInvalidValue;
  }
}

bool gemm_grouped_q8_supports(uint32_t t) { return t == kQ4_K || t == kQ6_K; }

cudaError_t gemm_grouped_q8(ActQ8 a, const GemmSegment* segs, int n_segs, uint32_t w_type, const GemmGroups& groups,
                            int64_t max_rows, int64_t k, GemvOut out, cudaStream_t s) {
  if (max_rows <= 0 || groups.e1 <= groups.e0) return cudaSuccess;
  Segments seg;
  if (!gemm_grouped_q8_supports(w_type) || k <= 0 || k % 256 != 0 || out == GemvOut::kGateUp || groups.e0 < 0 ||
      groups.a_div < 0 || !make_segments(segs, n_segs, Q8Tiles<Q8LoadQ4K>::kBN, &seg))
    return cudaErrorInvalidValue;
  const bool add = out == GemvOut::kAdd;
  if (a.per256)  // one activation scale a superblock: the superblock-wide kernel
    return w_type == kQ4_K ? launch_q8s_grouped<Q8sQ4K>(a, seg, groups, max_rows, k, add, s)
                           : launch_q8s_grouped<Q8sQ6K>(a, seg, groups, max_rows, k, add, s);
  return w_type == kQ4_K ? launch_q8_grouped<Q8LoadQ4K>(a, seg, groups, max_rows, k, add, s)
                         : launch_q8_grouped<Q8LoadQ6K>(a, seg, groups, max_rows, k, add, s);
}

}  // namespace bw24::cuda
