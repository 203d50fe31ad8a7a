// The grouped GEMMs over int8 activations (MoE prefill, Q4_K / Q6_K expert stacks; cuda/gemm/gemm.cuh
// gemm_grouped_q8): the per-sub-block kernel (activations with one scale a 32 columns) and the
// superblock-wide kernel (one scale a 256 columns). Both take the tile list of the routing
// (moe_group) as the bf16 grouped GEMM in gemm.cu does and share its epilogue (tile.cuh).
#include <cuda_bf16.h>

#include "cuda/common/check.cuh"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemm/expand.cuh"
#include "cuda/gemm/gemm.cuh"
#include "cuda/gemm/tile.cuh"

namespace bw24::cuda {
namespace {

using namespace gemm_detail;

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
// Skipping empty 16-row fragments (6e0964e): 305 / 180 us; each thread's copies planned once
// (8a8b967): 256 / 153 us. One CTA a SM (no register cap, no spills) measured slower: 442 / 261 us.
// With one activation scale a 256 columns the superblock-wide kernel further below applies the
// sub-block scales as integer multiply-adds (226 / 148 us, the default; performance.md, round 9).
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
  __device__ static void issue(uint8_t* st, const uint8_t* w, const Q8Row& row, const Q6KTiles&, int kt) {
    const uint8_t* blk = w + (row.rb + kt / 4) * 144;
#pragma unroll
    for (int c = 0; c < (kParts + 1) / 2; ++c) {
      const int p = row.p0 + 2 * c;
      if (p >= kParts) break;  // warp-uniform
      cp_async16(st + row.r * kRowBytes + p * 16, blk + (p == 0 ? 0 : 16 * p + 32 * (kt % 4)), row.in ? 16 : 0);
    }
  }
  // The thread's row, sub-block 2 (kt % 4) + p0.
  __device__ static void scales(const uint8_t* st, float* wsc, const Q8Row& row, const Q6KTiles&, int kt) {
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

// Q6_K planes (lib/quant/repack.h: ql[128] | qh[64] | scales[16] | d of every block in turn, cut by
// tiles: cuda/common/q6k_tiles.cuh):
// stage kt is sub-blocks s = 4 half + j, j = 2 (p % 2) + h (p = kt % 4, half = p / 2, h = 0, 1) of
// block kt / 4: both read the same qh bytes (bit pairs j) and the 64 ql bytes of half (nibble
// p % 2, 32 bytes each). Staged row: ql[64] | qh[32] | the block's 16 scales | the aligned 16
// bytes holding d | 16 bytes of padding (a 144-byte stride: conflict-free fragment loads).
// Scales: d sc of the stage's four 16-column groups (scale 4p + g).
struct Q8LoadQ6K {
  static constexpr int kRowBytes = 144, kScales = 4;
  // planes: where each field of a block is (cuda/common/q6k_tiles.cuh).
  __device__ static void issue(uint8_t* st, const uint8_t* w, const Q8Row& row, const Q6KTiles& planes, int kt) {
    const int64_t gb = row.rb + kt / 4;
    const int half = (kt % 4) / 2;
    uint8_t* dst = st + row.r * kRowBytes;
    const int sz = row.in ? 16 : 0;
    // Parts p0 + 2c: c = 0, 1 the ql bytes, 2 the qh bytes, 3 the scales (p0 = 0) or d (p0 = 1).
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int p = row.p0 + 2 * c;
      cp_async16(dst + 16 * p, w + planes.ql(gb) + 64 * half + 16 * p, sz);
    }
    cp_async16(dst + 16 * (4 + row.p0), w + planes.qh(gb) + 32 * half + 16 * row.p0, sz);
    cp_async16(dst + 16 * (6 + row.p0), w + (row.p0 == 0 ? planes.sc(gb) : planes.d(gb) & ~int64_t{15}), sz);
  }
  // The thread's row, groups 2 p0 and 2 p0 + 1 of the stage's four.
  __device__ static void scales(const uint8_t* st, float* wsc, const Q8Row& row, const Q6KTiles& planes, int kt) {
    const uint8_t* staged = st + row.r * kRowBytes;
    const float d = half_at(staged + 112 + (planes.d(row.rb + kt / 4) & 15));
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

// The epilogue of both kernels: warp (wm, wn)'s kMT x kNT fragments of the C tile through store_c,
// rows scattered back to pair order where the routing asks (the down projection).
template <class T>
__device__ __forceinline__ void store_tile(const float (&acc)[T::kMT][T::kNT][4], const Segments& seg,
                                           const GemmGroups& g, int s, int64_t m0, int64_t m_end, const uint8_t* w,
                                           int64_t n0, int64_t N, int64_t K, bool add, int wm, int wn, int lane) {
  const TileJob j{nullptr, nullptr, 1, m0, m_end, w, n0, N, K, pick_field(seg.c, s),
                  g.c_scatter ? g.sorted : nullptr, pick_field(seg.ldc, s), add};
  const bool pairs = (N % 2 == 0) && (j.ldc % 2 == 0);
#pragma unroll
  for (int i = 0; i < T::kMT; ++i)
#pragma unroll
    for (int jj = 0; jj < T::kNT; ++jj)
      store_c(j, pairs, wm * T::kWM + 16 * i + lane / 4, wn * T::kWN + 8 * jj + 2 * (lane % 4), acc[i][jj]);
}

// Both kernels' tile: column tile blockIdx.y is rows [n0, n0 + bn) of segment s; then, after the
// PDL wait (the tile list and the activations are the previous kernels' output), CTA x takes tile
// tile_start[e0] + x of the routing's list: its expert's sorted rows [m0, m_end) and that expert's
// weights in the segment. false: the CTA is past the tiles of experts [e0, e1) (the grid is sized by
// the pass's pair count) and has nothing to do. gemm.cu's bf16 grouped kernel reads its tile the
// same way in its own order: through this helper ptxas gave its Q6_K instance 100 registers, not 80.
struct GroupTile {
  int s;
  int64_t n0, m0, m_end, n;
  const uint8_t* w;
};
__device__ __forceinline__ bool group_tile(const Segments& seg, const GemmGroups& g, int64_t bn, GroupTile* t) {
  t->s = segment_of(seg, blockIdx.y, bn, &t->n0);
  pdl_begin();
  const int tile = g.tile_start[g.e0] + static_cast<int>(blockIdx.x);
  if (tile >= g.tile_start[g.e1]) return false;
  const int2 e = g.tiles[tile];  // {expert, first sorted row}
  t->m0 = e.y;
  t->m_end = g.offsets[e.x + 1];
  t->n = pick_field(seg.n, t->s);
  t->w = pick_field(seg.w, t->s) + (e.x - g.e0) * pick_field(seg.w_stride, t->s);
  return true;
}

// A launch of either kernel over the tiles of experts [e0, e1): at most one partial tile per expert
// beyond max_rows / kBM full ones.
template <class T, auto kKernel>
cudaError_t launch_tiles(ActQ8 a, const Segments& seg, const GemmGroups& g, int64_t max_rows, int64_t k, bool add,
                         cudaStream_t s) {
  if constexpr (T::kSmem > 48 * 1024) BW24_CUDA_TRY(allow_smem<kKernel>(T::kSmem));
  const dim3 grid(static_cast<unsigned>((max_rows + T::kBM - 1) / T::kBM + (g.e1 - g.e0)), seg.tile_end[seg.count - 1]);
  return launch_pdl(kKernel, grid, dim3(T::kThreads), T::kSmem, s, a, seg, g, k, add);
}

// Two CTAs a SM (16 warps to hide the scale arithmetic's latency): ptxas caps the kernel at 128
// registers (0 / 8 bytes of stack for Q4_K / Q6_K since the row plan, 48 / 80 before; uncapped it
// takes 187 / 231).
template <class Q>
__global__ void __launch_bounds__(Q8Tiles<Q>::kThreads, 2) gemm_q8_grouped_kernel(ActQ8 a, Segments seg, GemmGroups g,
                                                                                  int64_t K, bool add) {
  using T = Q8Tiles<Q>;
  extern __shared__ uint4 smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_raw);
  float* wsc = reinterpret_cast<float*>(smem + T::kStages * T::kStageBytes);
  GroupTile tile;
  if (!group_tile(seg, g, T::kBN, &tile)) return;
  const int s = tile.s;
  const int64_t n0 = tile.n0, m0 = tile.m0, m_end = tile.m_end, N = tile.n;
  const uint8_t* w = tile.w;
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
  const Q6KTiles planes(N * (K / 256), K / 256);  // Q6_K's field offsets (Q4_K: unused)
  auto load_stage = [&](int slot, int kt) {
    uint8_t* st = smem + slot * T::kStageBytes;
    cp_async16(reinterpret_cast<bf16*>(st) + swz(ar, ac), a_src + (arow >= 0 ? 64 * kt : 0), arow >= 0 ? 16 : 0);
    if (tid < T::kBM) cp_async16(st + T::kABytes + 16 * tid, d_src + (drow >= 0 ? 2 * kt : 0), drow >= 0 ? 16 : 0);
    Q::issue(st + T::kABytes + T::kDsBytes, w, row, planes, kt);
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
    Q::scales(sb, wsc, row, planes, kt);
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
  store_tile<T>(acc, seg, g, s, m0, m_end, w, n0, N, K, add, wm, wn, lane);
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
  __device__ static void copy_row(uint8_t* dst, const uint8_t* w, int64_t gb, const Q6KTiles&, int p0, int sz) {
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

// Q6_K planes (lib/quant/repack.h, cut by tiles: cuda/common/q6k_tiles.cuh): a row's superblock
// staged as ql[128] | qh[64] | scales[16] | the 16 bytes holding d (240-byte stride). Sub-block
// sbk: half h = sbk / 4, quarter u = sbk % 4, elements l + 32 u of the half (l < 32): ql[64 h + 32
// (u % 2) + l] nibble u / 2, qh[32 h + l] bits 2u; signed q - 32. Groups 2 sbk, 2 sbk + 1 (16
// columns each). Tables: sc [16][kBN].
struct Q8sQ6K {
  static constexpr int kBRow = 240, kGroups = 16;
  static constexpr bool kMin = false;
  // Thread half p0 of a row's two: ql chunks 4 p0 .. 4 p0 + 3, qh chunks 2 p0, 2 p0 + 1, then the
  // scales (p0 = 0) or d's 16-byte window (p0 = 1): seven copies each, their planes fixed.
  __device__ static void copy_row(uint8_t* dst, const uint8_t* w, int64_t gb, const Q6KTiles& planes, int p0, int sz) {
    const uint8_t* ql = w + planes.ql(gb) + 64 * p0;
    const uint8_t* qh = w + planes.qh(gb) + 32 * p0;
    const uint8_t* last = p0 == 0 ? w + planes.sc(gb) : w + (planes.d(gb) & ~int64_t{15});
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

template <class W>
__global__ void __launch_bounds__(Q8sTiles<W>::kThreads, 2) gemm_q8s_grouped_kernel(ActQ8 a, Segments seg,
                                                                                    GemmGroups g, int64_t K, bool add) {
  using T = Q8sTiles<W>;
  extern __shared__ uint4 smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_raw);
  int* sc_tab = reinterpret_cast<int*>(smem + T::kStages * T::kStageBytes);  // [kGroups][kBN]
  float* min_tab = reinterpret_cast<float*>(sc_tab + W::kGroups * T::kBN);    // [kBN][8]: dmin m (Q4_K)
  float* d_tab = min_tab + (W::kMin ? T::kBN * 8 : 0);                       // [kBN]
  GroupTile tile;
  if (!group_tile(seg, g, T::kBN, &tile)) return;
  const int s = tile.s;
  const int64_t n0 = tile.n0, m0 = tile.m0, m_end = tile.m_end, N = tile.n;
  const uint8_t* w = tile.w;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, wm = warp / T::kWarpsN, wn = warp % T::kWarpsN;
  const int64_t nblk = K / 32;
  const Q6KTiles planes(N * (K / 256), K / 256);  // Q6_K's field offsets (Q4_K: unused)
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
    W::copy_row(st + T::kABytes + T::kDsBytes + br * W::kBRow, w, rb + kt, planes, p0, b_in ? 16 : 0);
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
      W::decode6(sb + br * W::kBRow, br, p0, sc_tab, d_tab, T::kBN, static_cast<int>(planes.d(rb + kt) & 15));
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
  store_tile<T>(acc, seg, g, s, m0, m_end, w, n0, N, K, add, wm, wn, lane);
}

}  // namespace

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
    return w_type == kQ4_K
               ? launch_tiles<Q8sTiles<Q8sQ4K>, gemm_q8s_grouped_kernel<Q8sQ4K>>(a, seg, groups, max_rows, k, add, s)
               : launch_tiles<Q8sTiles<Q8sQ6K>, gemm_q8s_grouped_kernel<Q8sQ6K>>(a, seg, groups, max_rows, k, add, s);
  return w_type == kQ4_K
             ? launch_tiles<Q8Tiles<Q8LoadQ4K>, gemm_q8_grouped_kernel<Q8LoadQ4K>>(a, seg, groups, max_rows, k, add, s)
             : launch_tiles<Q8Tiles<Q8LoadQ6K>, gemm_q8_grouped_kernel<Q8LoadQ6K>>(a, seg, groups, max_rows, k, add, s);
}

}  // namespace bw24::cuda
