// The MoE routed GEMVs on the int8 path: the one-token Q4_K routed gate-up with its rows copied by the copy engine
// (gate_up_bulk_kernel) and the routed down projection with the MoE combine as its epilogue (gemv_q8_combine_kernel),
// with their dispatch tables, switches and occupancy. The formats and the activations' staging are
// q8_formats.cuh's (the register kernel's, gemv_q8.cu, whose routed launches take the rest).
#include <atomic>
#include <type_traits>

#include "cuda/common/act_q8.cuh"
#include "cuda/common/bulk.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"
#include "cuda/gemv/q8_formats.cuh"
#include "cuda/moe/combine.cuh"

namespace bw24::cuda {
using namespace gemv_detail;
namespace {

// The combine's weights by cp.async (round 39): a warp copies its kRoutedStoreRows rows of its
// expert into shared memory right after it reads its expert id (since round 50 behind the CTA's
// cp.async staging of the activations: the kernel says why), and dots from there. Round 38's timing
// build showed the register form's weight loads starting 1.1 us after the PDL wait, behind the ids
// and the staging of 8 activation rows; the register forms that issued them earlier spilled (rounds
// 37, 38). cp.async holds no registers: 48 (Q4_K) and 54 (Q6_K) registers (round 50's order), no
// spills, 35 KB of shared memory a CTA, still four an SM.
// Q4_K (the rows' blocks are one run in the file) and Q6_K (a run of each plane, or one run of whole
// tiles); the image keeps the tensor's layout for an expert of 4 rows, so the fields sit where
// Q6KTiles says, and the dot is row_dot's, so the bits are the register kernel's.
// Rows of at most kAsyncMaxBlocks<F> blocks take it (0: the format never does; combine_async_takes
// gives the measurements); a row's image holds kAsyncBlocks.
constexpr int kAsyncBlocks = 4;
template <class F>
constexpr int kAsyncMaxBlocks = std::is_same_v<F, Q6_K> ? kAsyncBlocks : std::is_same_v<F, Q4_K> ? 2 : 0;
template <class F>
constexpr bool kCombineAsync = kAsyncMaxBlocks<F> > 0;
template <class F>
constexpr int kAsyncRowBytes = std::is_same_v<F, Q6_K> ? 210 * kAsyncBlocks : 144 * kAsyncBlocks;  // a row's image
// Where the warps' images start in the dynamic shared memory: after the staged activations
// (staged_bytes), rounded up for the 16-byte copies. The kernel and its launch's size both use it.
__host__ __device__ constexpr int64_t async_images_at(int64_t staged) { return (staged + 15) / 16 * 16; }
// Bytes [src, src + n) into dst by the warp's lanes, 16 at a time (n % 16 == 0, both 16-byte aligned).
__device__ __forceinline__ void warp_copy16(uint8_t* dst, const uint8_t* src, int n, int lane) {
  for (int i = 16 * lane; i < n; i += 16 * 32) cp_async16(dst + i, src + i, 16);
}
// Rows [row, row + kRoutedStoreRows) of an expert of n_blocks blocks in rows of `blocks` into img, by the warp's
// lanes 16 bytes at a time (cp.async, the calling lanes' commit group), or (kBulk, round 61) by lane 0 with one
// cp.async.bulk a run counted in bytes on the warp's mbarrier `landed` (its 2.5 KB in 1-3 requests instead of ~160
// through the load-store unit). Q6_K's d plane (2 bytes a block, not 16-byte aligned) stays on the lanes' cp.async8
// either way. The image is the same, so are the bits.
template <class F, bool kBulk = false>
__device__ __forceinline__ void copy_rows(uint8_t* img, const uint8_t* w, int64_t n_blocks, int64_t row, int64_t blocks,
                                          int lane, uint64_t* landed = nullptr) {
  const int nb = kRoutedStoreRows * static_cast<int>(blocks);  // the image's blocks
  const int64_t gb0 = row * blocks;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  [[maybe_unused]] const uint64_t policy = kBulk ? l2_evict_first_policy() : 0;
#endif
  // A run's bytes (the bulk form rounds them up to 16, as warp_copy16's last copy does), all announced first.
  const auto rounded = [](int n) { return static_cast<uint32_t>(n + 15) / 16 * 16; };
  [[maybe_unused]] const auto expect = [&](uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kBulk) mbar_arrive_expect_tx(landed, bytes);
#endif
  };
  const auto run = [&](uint8_t* dst, const uint8_t* src, int n) {
    if constexpr (kBulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      bulk_copy_g2s(dst, src, rounded(n), landed, policy);
#endif
    } else {
      warp_copy16(dst, src, n, lane);
    }
  };
  const bool issues = !kBulk || lane == 0;  // the bulk form's requests are lane 0's, the lanes' copies every lane's
  if constexpr (std::is_same_v<F, Q4_K>) {
    if (issues) {
      expect(rounded(nb * 144));
      run(img, w + gb0 * 144, nb * 144);
    }
  } else {
    const Q6KTiles t6(n_blocks, blocks);
    if (t6.sh != kQ6KWhole) {  // whole tiles (rows of 8 or 16k blocks): one run, the image's tiles the same
      if (issues) {
        expect(rounded(nb * 210));
        run(img, w + t6.base(gb0), nb * 210);
      }
    } else {  // the plain planes: a run of each, at the planes of the image (an expert of nb blocks)
      const Q6KTiles it(nb, blocks);  // the image's layout, as dot_rows_image reads it
      if (issues) {
        expect(rounded(nb * 128) + rounded(nb * 64) + rounded(nb * 16));
        run(img + it.ql(0), w + t6.ql(gb0), nb * 128);
        run(img + it.qh(0), w + t6.qh(gb0), nb * 64);
        run(img + it.sc(0), w + t6.sc(gb0), nb * 16);
      }
      for (int i = 8 * lane; i < nb * 2; i += 8 * 32) cp_async8(img + it.d(0) + i, w + t6.d(gb0) + i);  // 8-byte aligned
    }
  }
}

// One step of dot_rows_image: block b of each piece (none where b >= blocks).
template <class F, int kRows>
__device__ __forceinline__ void dot_rows_image_step(const uint8_t* img, int64_t blocks, const ActQ8& x, int64_t cols,
                                                    int lane, int b, float (&acc)[kRows][1]) {
  const int sub = lane % 8;
  if (b >= blocks) return;
  const int nb = kRows * static_cast<int>(blocks);
  if constexpr (std::is_same_v<F, Q4_K>) {
    const int c = sub / 2, h = sub % 2;
    const Q4_K::Act<1> a = Q4_K::load_act<1>(x, cols, b, c, h);
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const uint8_t* blk = img + (m * blocks + b) * 144;
      const uint4 head = *reinterpret_cast<const uint4*>(blk), qq = *reinterpret_cast<const uint4*>(blk + 16 + 32 * c + 16 * h);
      Q4_K::dot<1>(head, qq, qq, a, c, h, acc[m]);
    }
  } else {
    const int n = sub / 4, l0 = 8 * (sub % 4);
    const Q6KTiles t6(nb, blocks);
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const int64_t gbm = m * blocks + b;
      const uint8_t* ql = img + t6.ql(gbm) + 64 * n + l0;
      const uint2 av = *reinterpret_cast<const uint2*>(ql), bv = *reinterpret_cast<const uint2*>(ql + 32),
                  hv = *reinterpret_cast<const uint2*>(img + t6.qh(gbm) + 32 * n + l0);
      Q6_K::block_dot<1>(av, bv, hv, img, t6, gbm, b, n, l0, x, cols, acc[m]);
    }
  }
}

// The lane's part of the warp's kRows pieces from the image (piece m's blocks at m x blocks; blocks <= 4 kSteps):
// row_dot's arithmetic and order (its blocks b, b + 4, .. of a lane, every piece at each), so the bits are the
// register kernel's: the combine's 4 rows (row_dot<1, 4, 4>, one step), the routed gate-up's gate and up
// (row_dot<1, 2, 1>, Q4_K, two steps).
template <class F, int kRows = kRoutedStoreRows, int kSteps = 1>
__device__ __forceinline__ void dot_rows_image(const uint8_t* img, int64_t blocks, const ActQ8& x, int64_t cols,
                                               int lane, float (&acc)[kRows][1]) {
#pragma unroll
  for (int step = 0; step < kSteps; ++step) {
    dot_rows_image_step<F, kRows>(img, blocks, x, cols, lane, lane / 8 + 4 * step, acc);
  }
}

// The combine quantizing its own input (MoeCombine::act, round 60): the token's k pair rows of f32 (the
// routed gate-up's output) into the staging's layout (stage_act: the int8 rows, then their (d, d sum q)
// pairs), as chunks of 128 floats a warp (four blocks of 32: store_act_q8x4, rmsnorm_q8's bits), chunk
// warp + u warps of the CTA. The loads go out first (load_pair_chunks, beside the expert id and before
// the weight copies), the codes after (quantize_pair_chunks, which syncs the CTA). kQuantChunks bounds a
// warp's chunks: k cols <= 128 kQuantChunks warps (the 30B's 8 x 768 is 3 a warp of 16 warps).
// Every CTA reads the 24 KB of f32 rows (the 30B's) where it staged 7.7 KB of int8, and in exchange the
// int8 launch between the gate-up and this one (24 CTAs, 0.9 us of segment a layer in next329's trace) and
// its boundary go. H200, tg128 `-p 512 -n 128 -r 2`, one binary, BW24_COMBINE_QUANT=0 / 1 (next336):
// Qwen3-30B-A3B 683.0 / 683.6 -> 690.1 / 689.9 (+1.0 %), at depth 4096 567.9 -> 575.1; Qwen3.6-35B-A3B
// 586.7 -> 602.1 (+2.6 %). Registers (cuobjdump): Q6_K with cp.async 62 (54 without the fold), Q4_K with
// cp.async 48, Q4_K register loads 64 with an 8-byte stack (none without).
constexpr int kQuantChunks = 4;
template <int kCtaThreads>
__device__ __forceinline__ void load_pair_chunks(float4 (&v)[kQuantChunks], const float* act, int64_t n) {
  constexpr int kWarps = kCtaThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int u = 0; u < kQuantChunks; ++u) {
    const int64_t ch = warp + int64_t{u} * kWarps;
    v[u] = ch < n / 128 ? __ldcg(reinterpret_cast<const float4*>(act + ch * 128) + lane) : make_float4(0, 0, 0, 0);
  }
}
template <int kCtaThreads>
__device__ __forceinline__ ActQ8 quantize_pair_chunks(const float4 (&v)[kQuantChunks], int64_t n) {
  constexpr int kWarps = kCtaThreads / 32;
  extern __shared__ int4 staged[];
  int8_t* q = reinterpret_cast<int8_t*>(staged);
  float2* ds = reinterpret_cast<float2*>(staged + n / 16);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int u = 0; u < kQuantChunks; ++u) {
    const int64_t ch = warp + int64_t{u} * kWarps;  // warp-uniform: every lane takes the shuffles
    if (ch < n / 128) store_act_q8x4(v[u], q + ch * 128 + 4 * lane, ds + ch * 4 + lane / 8);
  }
  __syncthreads();
  return ActQ8{q, ds};
}

// The one-token Q4_K routed gate-up with each warp's gate and up rows copied by the copy engine (round 61, as
// the combine's copy_rows<F, true>): lane 0 requests the two runs (blocks x 144 bytes each) into the warp's image
// in shared memory right after the expert id, counted on the warp's mbarrier, beside the staging of the
// activation row; the dot then reads the image in row_dot<1, 2, 1>'s order, so the bits are the register
// kernel's. No registers hold the weights in flight (40 registers, no stack), so the bound is six CTAs an SM: the
// 30B's 768 CTAs in one wave of 792 slots, where the register kernel's 64 registers ran 528 + 240. Rows up to
// kGateUpBulkBlocks. H200, tg128 `-p 512 -n 128 -r 2`, one binary, BW24_GATEUP_BULK=0 / 1 (next346):
// Qwen3-30B-A3B 706.8 / 705.2 -> 719.1 / 718.7 (+1.8 %); Qwen3.6-35B-A3B 605.0 -> 583.0, whose 512 CTAs one wave
// of the register kernel holds: gemv_q8_launch takes it only past that wave (g_gate_up_bulk_always below).
// Round 38's cp.async form of the same copies (gate-up-async.patch) measured +0.6 %.
constexpr int kGateUpBulkBlocks = 8;  // 2,048 columns: the MoE shapes' hidden width
constexpr int64_t kGateUpBulkImage = int64_t{kWarpsPerCta} * 2 * kGateUpBulkBlocks * 144;  // a CTA's images
constexpr int kGateUpRegCtas = kMinCtas<Q4_K, 1, GemvOut::kGateUp>;
__global__ void __launch_bounds__(kThreads, 6)
    gate_up_bulk_kernel(const uint8_t* w, const uint8_t* w2, float* y, int64_t rows, int64_t cols, ActQ8 x, int act,
                        GemvRoute route) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerCta + warp, blocks = cols / 256;
  const uint32_t run = static_cast<uint32_t>(blocks * 144);
  __shared__ uint64_t landed[kWarpsPerCta];
  extern __shared__ int4 dyn[];
  uint8_t* img = reinterpret_cast<uint8_t*>(dyn) + async_images_at(staged_bytes(cols, 1)) + warp * 2 * run;
  if (lane == 0) {
    mbar_init(&landed[warp], 1);
    mbar_init_fence();
  }
  __syncwarp();
  pdl_begin();  // the expert comes from the router's output
  const int64_t expert = route.ids[blockIdx.y], xr = blockIdx.y / route.x_div;
  if (row < rows && lane == 0) {
    const uint64_t policy = l2_evict_first_policy();
    const int64_t at = expert * route.expert_bytes + row * run;
    mbar_arrive_expect_tx(&landed[warp], 2 * run);
    bulk_copy_g2s(img, w + at, run, &landed[warp], policy);
    bulk_copy_g2s(img + run, w2 + at, run, &landed[warp], policy);
  }
  y += int64_t{blockIdx.y} * rows;
  x.q += xr * cols;
  x.ds += xr * (cols / 32);
  stage_act(x, cols, 1);
  if (row >= rows) return;
  mbar_wait(&landed[warp], 0);
  float acc[2][1] = {};  // gate, up: row_dot<1, 2, 1>'s order
  dot_rows_image<Q4_K, 2, kGateUpBulkBlocks / 4>(img, blocks, x, cols, lane, acc);
  const float g = warp_sum(acc[0][0]), u = warp_sum(acc[1][0]);
  if (lane == 0) y[row] = gate_activation(g, act) * u;
#endif
}
std::atomic<int> g_gate_up_bulk{-1};  // -1: not yet read from BW24_GATEUP_BULK (0: off)
std::atomic<bool> g_gate_up_bulk_always{false};  // the kernel check's hook: every shape the kernel takes
std::atomic<long> g_gate_up_bulk_launches{0};

// The routed down projection with the MoE combine as its epilogue (gemv_q8_combine, gemv.cuh):
// CTA (b, t) takes rows 4 kG b .. 4 kG b + 4 kG - 1 of every pair of token t (kG below), warp j of
// each row group pair j (k <= 8), four rows a warp as launch<F, kStore, 1, kRoutedStoreRows>, so each
// pair's value is the routed store launch's bit for bit. (A loop over pairs j, j + 8, ... for k > 8
// took the K-quant instances from 48-64 to 71-80 registers; models with more than 8 experts a token
// keep moe_combine.) The k x 4 kG values meet in shared memory and 4 kG threads add them into the
// residual with moe_combine_value: the combine's launch and its kernel boundary (1.6 us a MoE layer
// measured, docs/performance.md round 11) go. Grid (rows / 4 kG, tokens): 512 CTAs of 8 warps for a
// Qwen3-30B-A3B token at kG = 1, the routed store launch's count; bounded to 1,024 threads an SM
// (528 slots at kG = 1, one wave on an H200: 64 registers, where the Q6_K register form spills,
// against 72 unbounded and three CTAs an SM).
// kAsync: the weights by cp.async (above; combine_async_takes says where).
// kG: row groups of kRows a CTA (kG x 8 warps, kG x kRows output rows). Group g's warps do what a
// one-group CTA's warps do for rows (kG b + g) kRows .., so the bits are the same, and the groups
// share one staging of the token's k activation rows. Every CTA stages all k of them (7.7 KB for a
// Qwen3-30B-A3B token: 3.9 MB into the SMs over the 512 CTAs of a layer, beside 10.3 MB of Q6_K
// weights): thread 0's stamps (round 49, next272) put 8,375 cycles between the wait and the end of
// the staging of the cp.async form (7,201 with the weights already in L2), the dot 2,037. Two groups
// (256 CTAs of 16 warps, two an SM, the same 1,024 threads) stage 2.0 MB: H200, tg128 `-p 16 -r 2`,
// one binary (next273): Qwen3-30B-A3B 654.2 / 654.7 -> 661.1 / 661.3, Qwen3.6-35B-A3B 572.9 -> 575.3.
// kQuant (MoeCombine::act): the launch quantizes the pairs' f32 rows itself (load_pair_chunks and
// quantize_pair_chunks, above) in place of staging the int8 rows an rmsnorm_q8 launch wrote: that launch
// and its boundary go.
// kBulk (with kAsync and kQuant, two groups): the warp's rows by copy_rows<F, true>, lane 0's cp.async.bulk on the
// warp's mbarrier, in place of ~160 16-byte cp.async a warp (2.5 KB of Q6_K: 3 x 4 blocks). Round 38's stamps
// put the Q6_K dot phase at 10.3 MB in 4.6 us (2.2 TB/s) with every byte requested at once; the load-store
// unit's 16-byte requests are the likely limit (not profiled): the copy engine takes a run in one request, as
// the streamed GEMV's producer does (4+ TB/s there). H200, tg128 `-p 512 -n 128 -r 2`, one binary (next344),
// main's forms / Q6_K bulk / Q6_K and Q4_K bulk: Qwen3-30B-A3B 692.7 / 693.7 -> 698.1 / 698.4 -> 706.7 / 706.4
// (+2.0 %), at depth 4096 577.0 -> 585.0; Qwen3.6-35B-A3B 603.6 -> 603.7 -> 605.8. The 30B's 3-block Q4_K rows,
// which lost with the lanes' cp.async (next277, next338), gain with it. Registers: Q6_K 62 -> 52, Q4_K 64 -> 47.
template <class F, bool kAsync = false, int kG = 1, bool kQuant = false, bool kBulk = false>
__global__ void __launch_bounds__(kThreads * kG, 4 / kG) gemv_q8_combine_kernel(const uint8_t* w, int64_t rows,
                                                                            int64_t cols, ActQ8 x, GemvRoute route,
                                                                            MoeCombine c) {
  constexpr int kRows = kRoutedStoreRows, kOut = kRows * kG;  // kOut: the CTA's output rows
  __shared__ float value[kG][kWarpsPerCta][kRows];
  const int lane = threadIdx.x % 32, warp_all = threadIdx.x / 32, grp = kG == 1 ? 0 : warp_all / kWarpsPerCta,
            warp = kG == 1 ? warp_all : warp_all % kWarpsPerCta, t = blockIdx.y, k = c.k;
  const int64_t row0 = int64_t{blockIdx.x} * kOut, row = row0 + grp * kRows, blocks = cols / F::kBlockElems,
                n_blocks = rows * blocks;
  pdl_begin();  // the experts come from the router's output
  const int64_t pair0 = int64_t{t} * k;
  // Everything the warps and the epilogue read besides the activations is loaded here, beside the
  // staging's loads: the pair's expert, the routing weights and, for threads 0-3, the residual and
  // the shared expert's output and gate. Read after the staging and the sums, as before, each was
  // one more L2 round trip between the wait and the output. The epilogue's values wait in shared
  // memory (stored after the staging), not in registers across the dot (64 a thread at most here).
  __shared__ float epi_w[kMoeMaxUsed], epi_resid[kOut], epi_shared[kOut], epi_gate;
  int64_t expert = 0;
  ActQ8 xs = x;  // the activation rows where the dots read them
  float4 fv[kQuantChunks];  // kQuant: the warp's 128-float chunks of the pairs' f32 rows
  if constexpr (kAsync) {
    // The cp.async form orders its requests by what waits on them: the expert id first (a volatile
    // load, so that it is not scheduled after the volatile copies below: the weights' addresses wait
    // on it), then the staging of the token's rows, then the weights. The rows (L2 hits) then land
    // ahead of the weights instead of queueing behind the CTA's 20-40 KB of copies (8,375 cycles
    // from the wait to the end of the staging in round 49's stamps). H200, tg128 `-p 16 -r 2`, one
    // binary (next277): Qwen3-30B-A3B 660.1 / 659.6 / 660.3 -> 661.4 / 661.5, Qwen3.6-35B-A3B 575.1
    // -> 577.0. The staging first, before the id, measured 659.3 / 658.6 (it delays the weights); the
    // weights in a commit group a row with each row's dot once its group landed lost 1.8-3.2 %
    // (next275, next276).
    if (warp < k) {
      int id;
      asm volatile("ld.global.s32 %0, [%1];\n" : "=r"(id) : "l"(route.ids + pair0 + warp));
      expert = id;
    }
  } else {
    expert = warp < k ? route.ids[pair0 + warp] : 0;
  }
  // Then the input: the f32 rows' loads (kQuant, quantized below once the weight copies are out) or the
  // int8 rows' cp.async staging.
  if constexpr (kQuant)
    load_pair_chunks<kThreads * kG>(fv, c.act + pair0 * cols, int64_t{k} * cols);
  else if constexpr (kAsync)
    xs = stage_act_async<kThreads * kG>(ActQ8{x.q + pair0 * cols, x.ds + pair0 * (cols / 32)}, cols, k);
  const int64_t out_i = int64_t{t} * rows + row0 + (threadIdx.x < kOut ? threadIdx.x : 0);
  const float wv = static_cast<int>(threadIdx.x) < k ? c.weights[pair0 + threadIdx.x] : 0.0f;
  float resid = 0.0f, shared = 0.0f, gate = 0.0f;
  if (threadIdx.x < kOut) {
    resid = c.x[out_i];
    if (c.shared_out) {
      shared = c.shared_out[out_i];
      gate = c.shared_gate[t];
    }
  }
  uint8_t* img = nullptr;
  __shared__ uint64_t landed[kBulk ? kG * kWarpsPerCta : 1];  // kBulk: a warp's copies, counted in bytes
  if constexpr (kAsync) {  // the warp's rows into its image (dynamic shared memory after the staging)
    extern __shared__ int4 dyn[];
    img = reinterpret_cast<uint8_t*>(dyn) + async_images_at(staged_bytes(cols, k)) + warp_all * kAsyncRowBytes<F> * kRows;
    if constexpr (kBulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if (warp < k) {
        if (lane == 0) {
          mbar_init(&landed[warp_all], 1);
          mbar_init_fence();
        }
        __syncwarp();
        copy_rows<F, true>(img, w + expert * route.expert_bytes, n_blocks, row, blocks, lane, &landed[warp_all]);
      }
#endif
    } else {
      if (warp < k) copy_rows<F>(img, w + expert * route.expert_bytes, n_blocks, row, blocks, lane);
    }
    cp_async_commit();
    if constexpr (kQuant) {
      xs = quantize_pair_chunks<kThreads * kG>(fv, int64_t{k} * cols);
    } else {
      cp_async_wait<1>();  // the staging's group (the weights' is the later one)
      __syncthreads();
    }
  } else if constexpr (kQuant) {
    xs = quantize_pair_chunks<kThreads * kG>(fv, int64_t{k} * cols);
  } else {
    xs.q += pair0 * cols;
    xs.ds += pair0 * (cols / 32);
    stage_act<kThreads * kG>(xs, cols, k);  // the token's k activation rows
  }
  if (static_cast<int>(threadIdx.x) < k) epi_w[threadIdx.x] = wv;
  if (threadIdx.x < kOut) {
    epi_resid[threadIdx.x] = resid;
    epi_shared[threadIdx.x] = shared;
    if (threadIdx.x == 0) epi_gate = gate;
  }
  if (warp < k) {
    const int j = warp;
    const uint8_t* base = w + expert * route.expert_bytes;
    const uint8_t* wj[kRows] = {base, base, base, base};
    const ActQ8 xj{xs.q + j * cols, xs.ds + j * (cols / 32)};
    float acc[kRows][1] = {};
    if constexpr (kAsync) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (kBulk) mbar_wait(&landed[warp_all], 0);
#endif
      cp_async_wait<0>();
      __syncwarp();  // every lane's copies landed
      dot_rows_image<F>(img, blocks, xj, cols, lane, acc);
    } else {
      F::template row_dot<1, kRows, kRows>(wj, n_blocks, row, blocks, xj, cols, lane, acc);
    }
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      const float v = warp_sum(acc[m][0]);
      if (lane == 0) value[grp][j][m] = v;
    }
  }
  __syncthreads();
  if (threadIdx.x < kOut) {
    const int e = threadIdx.x, m = e % kRows, g = e / kRows;
    c.x[out_i] = moe_combine_value(
        epi_resid[e], epi_w, [&](int j) { return value[g][j][m]; }, k, c.shared_out ? &epi_shared[e] : nullptr, epi_gate);
  }
}

std::atomic<int> g_combine_async{-1};
std::atomic<int> g_combine_wide{-1};
std::atomic<int> g_combine_quant{-1};  // -1: not yet read from BW24_COMBINE_QUANT (0: off)
std::atomic<int> g_combine_bulk{-1};  // -1: not yet read from BW24_COMBINE_BULK (0: off)
std::atomic<long> g_combine_async_launches{0}, g_combine_wide_launches{0}, g_combine_bulk_launches{0};

// Where the combine takes the cp.async form: rows of up to kAsyncMaxBlocks blocks (Q6_K 4, Q4_K 2). H200, tg128 `-p 16 -r 2`, two rounds, one binary (next227): async for both types
// Qwen3-30B-A3B 597.5 / 597.2 -> 600.0 / 598.6, Qwen3.6-35B-A3B 538.7 / 536.1 -> 545.0 / 545.9;
// for Q6_K only 604.6 / 605.0 and 541.7 / 540.8. So the 30B's Q4_K rows of 3 blocks (768 wide)
// lose with it (the trace: 5.30 -> 5.83 us a launch) and the 35B's of 2 (512 wide) gain. Asked again
// with round 50's order (the staging ahead of the weights, next277): 30B 661.4 -> 648.9 with the
// 3-block Q4_K rows taking it too.
// Where the combine takes copy_rows<F, true>: the cp.async form's conditions, but rows of up to kAsyncBlocks blocks
// of Q4_K too (the 30B's 3-block rows lost with the lanes' cp.async, next277 / next338, and gain with the bulk
// copies). Taken only by the two-group launch that quantizes its input (every MoE shape here).
template <class F>
bool combine_bulk_takes(int64_t cols, int64_t staged) {
  return cols / F::kBlockElems <= kAsyncBlocks && staged <= kMaxStagedBytes && gemv_q8_combine_async() &&
         gemv_q8_combine_bulk() && pdl_supported();  // cp.async.bulk: sm_90 on, as PDL
}
template <class F>
bool combine_async_takes(int64_t cols, int64_t staged) {
  return cols / F::kBlockElems <= kAsyncMaxBlocks<F> && staged <= kMaxStagedBytes && gemv_q8_combine_async();
}
// The async launch's dynamic shared memory: the staging, then the warps' images. allow_smem sets the
// kernel's limit once a device, so it allows the largest launch's (the staging's cap).
template <class F>
constexpr int64_t kAsyncImageBytes = kWarpsPerCta * kRoutedStoreRows * kAsyncRowBytes<F>;
template <class F, int kG = 1>
size_t async_smem(int64_t staged) { return static_cast<size_t>(async_images_at(staged) + kG * kAsyncImageBytes<F>); }
template <class F, int kG = 1, bool kQuant = false, bool kBulk = false>
cudaError_t allow_async_smem() {
  return allow_smem<gemv_q8_combine_kernel<F, true, kG, kQuant, kBulk>>(
      static_cast<size_t>(kMaxStagedBytes + kG * kAsyncImageBytes<F>));
}

// Where the combine takes two row groups a CTA (kG = 2, the kernel's comment says why): Q4_K and Q6_K
// (kCombineWide) over rows a multiple of 8 (every MoE shape). launch_combine and routed_occupancy ask both.
template <class F>
constexpr bool kCombineWide = std::is_same_v<F, Q4_K> || std::is_same_v<F, Q6_K>;
bool combine_two_groups(int64_t rows) { return gemv_q8_combine_wide() && rows % (2 * kRoutedStoreRows) == 0; }

template <class F, int kG>
cudaError_t launch_combine_g(const uint8_t* w, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                             const MoeCombine& c, cudaStream_t s) {
  const int64_t smem = staged_bytes(cols, c.k);
  const dim3 grid(static_cast<unsigned>(rows / (kRoutedStoreRows * kG)), static_cast<unsigned>(route.pairs / c.k));
  const dim3 block(kThreads * kG);
  if constexpr (kCombineAsync<F>) {
    // cp.async's 16-byte copies need every expert 16-byte aligned (a Q6_K expert of rows x blocks
    // with rows x blocks not a multiple of 8 is not: it keeps the register loads).
    const bool aligned = reinterpret_cast<uintptr_t>(w) % 16 == 0 && route.expert_bytes % 16 == 0;
    if constexpr (kG == 2)
      if (aligned && c.act && combine_bulk_takes<F>(cols, smem)) {
        g_combine_bulk_launches.fetch_add(1, std::memory_order_relaxed);
        BW24_CUDA_TRY((allow_async_smem<F, kG, true, true>()));
        return launch_pdl(gemv_q8_combine_kernel<F, true, kG, true, true>, grid, block, async_smem<F, kG>(smem), s, w,
                          rows, cols, x, route, c);
      }
    if (aligned && combine_async_takes<F>(cols, smem)) {
      g_combine_async_launches.fetch_add(1, std::memory_order_relaxed);
      if constexpr (kG == 2)
        if (c.act) {
          BW24_CUDA_TRY((allow_async_smem<F, kG, true>()));
          return launch_pdl(gemv_q8_combine_kernel<F, true, kG, true>, grid, block, async_smem<F, kG>(smem), s, w,
                            rows, cols, x, route, c);
        }
      BW24_CUDA_TRY((allow_async_smem<F, kG>()));
      return launch_pdl(gemv_q8_combine_kernel<F, true, kG>, grid, block, async_smem<F, kG>(smem), s, w, rows, cols,
                        x, route, c);
    }
  }
  if constexpr (kG == 2 && kCombineWide<F>)
    if (c.act)
      return launch_pdl(gemv_q8_combine_kernel<F, false, kG, true>, grid, block, staged_smem(smem), s, w, rows, cols,
                        x, route, c);
  return launch_pdl(gemv_q8_combine_kernel<F, false, kG>, grid, block, staged_smem(smem), s, w, rows, cols, x, route,
                    c);
}

template <class F>
cudaError_t launch_combine(const uint8_t* w, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                           const MoeCombine& c, cudaStream_t s) {
  if (cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  if constexpr (kCombineWide<F>)
    if (combine_two_groups(rows)) {
      g_combine_wide_launches.fetch_add(1, std::memory_order_relaxed);
      return launch_combine_g<F, 2>(w, rows, cols, x, route, c, s);
    }
  return launch_combine_g<F, 1>(w, rows, cols, x, route, c, s);
}

}  // namespace

// Whether a one-token Q4_K routed gate-up of seg's rows takes gate_up_bulk_kernel (gemv_q8.cu's gemv_q8_launch says
// when).
bool gemv_detail::gate_up_bulk_takes(const GemvSegment& seg, const void* w2, int64_t cols,
                                     const GemvRoute& route) {
  const bool aligned = reinterpret_cast<uintptr_t>(seg.w) % 16 == 0 && reinterpret_cast<uintptr_t>(w2) % 16 == 0;
  const int64_t ctas = (seg.rows + kWarpsPerCta - 1) / kWarpsPerCta * route.pairs;
  return cols % 256 == 0 && cols / 256 <= kGateUpBulkBlocks && aligned && gemv_q8_gate_up_bulk() && pdl_supported() &&
         (g_gate_up_bulk_always.load(std::memory_order_relaxed) || ctas > int64_t{kGateUpRegCtas} * sm_count());
}
// The routed one-token Q4_K gate-up by gate_up_bulk_kernel (where gate_up_bulk_takes).
cudaError_t gemv_detail::gate_up_bulk_launch(const GemvSegment& seg, const void* w2, int64_t cols, ActQ8 x, int act,
                                             const GemvRoute& route, cudaStream_t s) {
  g_gate_up_bulk_launches.fetch_add(1, std::memory_order_relaxed);
  BW24_CUDA_TRY(allow_smem<gate_up_bulk_kernel>(static_cast<size_t>(kMaxStagedBytes + 16 + kGateUpBulkImage)));
  const dim3 grid(static_cast<unsigned>((seg.rows + kWarpsPerCta - 1) / kWarpsPerCta),
                  static_cast<unsigned>(route.pairs));
  const size_t smem =
      static_cast<size_t>(async_images_at(staged_bytes(cols, 1)) + kWarpsPerCta * 2 * (cols / 256) * 144);
  return launch_pdl(gate_up_bulk_kernel, grid, dim3(kThreads), smem, s, static_cast<const uint8_t*>(seg.w),
                    static_cast<const uint8_t*>(w2), seg.y, seg.rows, cols, x, act, route);
}

long gemv_q8_combine_async_launches() { return g_combine_async_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_async() { return env_switch(g_combine_async, "BW24_COMBINE_ASYNC"); }
void gemv_q8_set_combine_async(bool on) { g_combine_async.store(on ? 1 : 0, std::memory_order_relaxed); }
long gemv_q8_gate_up_bulk_launches() { return g_gate_up_bulk_launches.load(std::memory_order_relaxed); }
bool gemv_q8_gate_up_bulk() { return env_switch(g_gate_up_bulk, "BW24_GATEUP_BULK"); }
void gemv_q8_set_gate_up_bulk(bool on) { g_gate_up_bulk.store(on ? 1 : 0, std::memory_order_relaxed); }
void gemv_q8_set_gate_up_bulk_always(bool on) { g_gate_up_bulk_always.store(on, std::memory_order_relaxed); }
long gemv_q8_combine_bulk_launches() { return g_combine_bulk_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_bulk() { return env_switch(g_combine_bulk, "BW24_COMBINE_BULK"); }
void gemv_q8_set_combine_bulk(bool on) { g_combine_bulk.store(on ? 1 : 0, std::memory_order_relaxed); }
long gemv_q8_combine_wide_launches() { return g_combine_wide_launches.load(std::memory_order_relaxed); }
bool gemv_q8_combine_wide() { return env_switch(g_combine_wide, "BW24_COMBINE_WIDE"); }
void gemv_q8_set_combine_wide(bool on) { g_combine_wide.store(on ? 1 : 0, std::memory_order_relaxed); }

bool gemv_q8_combine_supports(uint32_t type, int64_t rows, int64_t cols, int k) {
  return gemv_q8_supports(type) && rows > 0 && rows % kRoutedStoreRows == 0 && cols > 0 && cols % 32 == 0 && k >= 1 &&
         k <= kWarpsPerCta;
}

// The launch quantizes its own input (MoeCombine::act) where it takes two row groups a CTA (Q4_K, Q6_K),
// the token's k rows are whole 128-float chunks, at most kQuantChunks a warp of its 16, and their int8
// staging fits.
bool gemv_q8_combine_quantizes(uint32_t type, int64_t rows, int64_t cols, int k) {
  const int64_t n = int64_t{k} * cols;
  return gemv_q8_combine_supports(type, rows, cols, k) && (type == kQ4_K || type == kQ6_K) && combine_two_groups(rows) &&
         n % 128 == 0 && n <= 128 * kQuantChunks * 2 * kWarpsPerCta && staged_bytes(cols, k) <= kMaxStagedBytes;
}
bool gemv_q8_combine_quant() { return env_switch(g_combine_quant, "BW24_COMBINE_QUANT"); }

// The dispatch table of the combining launch: one entry per int8-path format.
cudaError_t gemv_q8_combine(const void* w, uint32_t type, int64_t rows, int64_t cols, ActQ8 x, const GemvRoute& route,
                            const MoeCombine& c, cudaStream_t s) {
  if (!gemv_q8_combine_supports(type, rows, cols, c.k) || !route.ids || !c.x || !c.weights ||
      (c.shared_out && !c.shared_gate) || route.x_div != 1 || route.pairs < c.k || route.pairs % c.k != 0 ||
      route.pairs / c.k > 65535 || route.expert_bytes % 16 != 0 || rows / kRoutedStoreRows > INT32_MAX ||
      (c.act && !gemv_q8_combine_quantizes(type, rows, cols, c.k)))
    return cudaErrorInvalidValue;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  switch (type) {
    case kQ4_0: return launch_combine<Legacy<Q4_0>>(wb, rows, cols, x, route, c, s);
    case kQ4_1: return launch_combine<Legacy<Q4_1>>(wb, rows, cols, x, route, c, s);
    case kQ5_0: return launch_combine<Legacy<Q5_0>>(wb, rows, cols, x, route, c, s);
    case kQ5_1: return launch_combine<Legacy<Q5_1>>(wb, rows, cols, x, route, c, s);
    case kQ8_0: return launch_combine<Legacy<Q8_0>>(wb, rows, cols, x, route, c, s);
    case kQ4_K: return launch_combine<Q4_K>(wb, rows, cols, x, route, c, s);
    case kQ5_K: return launch_combine<Q5_K>(wb, rows, cols, x, route, c, s);
    case kQ6_K: return launch_combine<Q6_K>(wb, rows, cols, x, route, c, s);
    case kIQ4_XS: return launch_combine<IQ4_XS>(wb, rows, cols, x, route, c, s);
    default: return cudaErrorInvalidValue;
  }
}

namespace {
// The combine instance launch_combine_g<F, kG> takes over rows of `cols` (cp.async or register loads).
template <class F, int kG>
cudaError_t combine_occupancy(int64_t cols, int64_t staged, GemvOccupancy* o) {
  if constexpr (kCombineAsync<F> && kG == 2) {
    if (combine_bulk_takes<F>(cols, staged)) {  // the runner's quantizing launch (MoeCombine::act)
      if (const cudaError_t e = allow_async_smem<F, kG, true, true>(); e != cudaSuccess) return e;
      return occupancy_of<gemv_q8_combine_kernel<F, true, kG, true, true>>(async_smem<F, kG>(staged), o, kG * kThreads);
    }
  }
  if constexpr (kCombineAsync<F>) {
    if (combine_async_takes<F>(cols, staged)) {
      if (const cudaError_t e = allow_async_smem<F, kG>(); e != cudaSuccess) return e;
      return occupancy_of<gemv_q8_combine_kernel<F, true, kG>>(async_smem<F, kG>(staged), o, kG * kThreads);
    }
  }
  return occupancy_of<gemv_q8_combine_kernel<F, false, kG>>(staged_smem(staged), o, kG * kThreads);
}
template <class F>
cudaError_t routed_occupancy(int64_t gate_cols, int64_t down_cols, int k, GemvOccupancy* combine) {
  const int64_t staged = staged_bytes(down_cols, k);
  if constexpr (kCombineWide<F>)
    if (combine_two_groups(gate_cols))  // the down's rows: the hidden width, the gate-up's columns
      return combine_occupancy<F, 2>(down_cols, staged, combine);
  return combine_occupancy<F, 1>(down_cols, staged, combine);
}
}  // namespace

cudaError_t gemv_q8_routed_occupancy(uint32_t type, int64_t gate_cols, int64_t down_cols, int k,
                                     GemvOccupancy* gate_up, GemvOccupancy* combine) {
  if (!gate_up || !combine || gate_cols <= 0 || down_cols <= 0 || k < 1 || k > kWarpsPerCta)
    return cudaErrorInvalidValue;
  // The register kernel's gate-up (gemv_q8.cu; Q4_K, Q5_K and Q6_K, else refused): it decides where the bulk kernel
  // (gate_up_bulk_kernel, six an SM by its bound) runs.
  if (const cudaError_t e = gate_up_register_occupancy(type, gate_cols, gate_up); e != cudaSuccess) return e;
  switch (type) {
    case kQ4_K: return routed_occupancy<Q4_K>(gate_cols, down_cols, k, combine);
    case kQ5_K: return routed_occupancy<Q5_K>(gate_cols, down_cols, k, combine);
    case kQ6_K: return routed_occupancy<Q6_K>(gate_cols, down_cols, k, combine);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
