// The streamed one-token GEMV (sm_90): persistent CTAs, two per SM, each walking an even share of
// the row groups (8 rows, a warp each) in K chunks. Stage = the group's 8 row pieces of a chunk
// (per matrix: two for gate + up), every plane of a piece one bulk copy, into a ring of
// kStreamStages stages completed on mbarriers (cuda/common/bulk.cuh); a stage is refilled once
// every warp has used it (one __syncthreads per stage). Formats: Q4_K and Q5_K (file layout, one
// plane). The copies are written for the plane layouts of lib/quant/repack.h too (a bulk copy per
// plane of a piece); Q6_K, Q8_0 and IQ4_XS entries wait on branch wip/gpu-unvalidated for their
// kernel check on the H200 (Q8_0 measured slower streamed: Qwen3-8B tg128 268.5 against 287.7).
// Other formats, several tokens and routed (MoE) launches stay on the warp-per-row kernel of
// gemv_q8.cu.
//
// Why: the warp-per-row kernel issues a row's 2.3 KB (K = 4096) and then waits: its bytes in
// flight are capped by registers (60 per lane at 4 CTAs/SM), each CTA pays its activation staging
// before its first weight load, and 1.5-3 waves of short-lived CTAs leave tails (ncu: QKV 14.2 MB
// in 13.2 us = 1.1 TB/s, gate-up 56.6 MB in 34 us = 1.7 TB/s). Here 2 CTAs x 3 stages x 18-27 KB
// are in flight per SM (kernels-hopper.md §1.2 asks for >= 32 KB), the first stages are issued
// before the PDL wait (weights depend on nothing, so they overlap the previous kernel), and the
// work is split evenly (O: 512 groups on 264 CTAs). Measured (H200, f55bde0, Q4_K / Q5_K only):
// gate-up 26.8 us (2.1 TB/s), QKV 11.4 us, Qwen3-8B Q4_K_M tg128 278.8 -> 326.8 tok/s
// (docs/performance.md).
//
// Results differ from the warp-per-row kernel by float summation order only (K-quant lanes sum 64
// weights, not 32): bw24-kernel-check gemv_q8_streamed compares the two (normalized error < 1e-6).
#include <cuda_fp16.h>

#include <algorithm>

#include "cuda/common/bulk.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"
#include "cuda/gemv/q8_common.cuh"

namespace bw24::cuda::gemv_detail {
namespace {

constexpr int kStreamStages = 3;
// Two CTAs per SM (16 warps): with one, the warps could not hide their own load-to-use chains
// (H200, Qwen3-8B Q4_K_M tg128: 237.9 tok/s with one, 325.8 with two, f55bde0).
constexpr int kCtasPerSm = 2;

// ---------------------------------------------------------------------------------------------
// Formats. Each gives: kBlockElems; kChunk (blocks per row piece for one matrix); kLanes (lanes
// per block: a warp step covers 32 / kLanes blocks); kPlanes and plane_bytes(p) (bytes per block
// of each plane, in plane order; a piece holds plane p at kChunk x the bytes of the planes before
// it); kPlaneAlign (blocks per row must be a multiple of it for the small planes' copies to stay
// 16-byte multiples); Act + load_act (the lane's activations of block b); dot (the lane's part of
// block bb of a piece).
// ---------------------------------------------------------------------------------------------

// Q4_K / Q5_K: lane c of a block's four takes the sub-block pair 2c, 2c + 1: the 32 quant bytes
// qs[32c, 32c + 32) (64 weights), so the scale / min decode and the float epilogue are paid once
// per 64 weights (ncu of a version with 32 weights per lane: 4.2 instructions per weight against
// the budget of ~2, kernels-hopper.md §1.3).
template <bool kFifth>
struct KQuantStream {
  static constexpr int kBlockElems = 256, kChunk = 16, kLanes = 4, kPlanes = 1, kPlaneAlign = 1;
  __host__ __device__ static constexpr int plane_bytes(int) { return kFifth ? 176 : 144; }
  static constexpr int kQs = kFifth ? 48 : 16;
  struct Act {
    int4 lo[2], hi[2];  // columns 64c + [0, 32) (sub-block 2c) and 64c + 32 + [0, 32) (2c + 1)
    float4 ds;          // (d, d sum q) of sub-blocks 2c and 2c + 1
  };
  __device__ static Act load_act(const ActQ8& x, int64_t b, int c) {
    const int4* q = reinterpret_cast<const int4*>(x.q + b * 256 + 64 * c);
    return {{q[0], q[1]}, {q[2], q[3]}, reinterpret_cast<const float4*>(x.ds)[b * 4 + c]};
  }
  template <int kCh>
  __device__ static float dot(const uint8_t* piece, int bb, const Act& a, int c) {
    constexpr int kLo = 0x0F0F0F0F, kBit = 0x01010101;
    const uint8_t* blk = piece + bb * plane_bytes(0);
    const uint4 head = *reinterpret_cast<const uint4*>(blk);
    const uint4* qs = reinterpret_cast<const uint4*>(blk + kQs + 32 * c);
    const uint4 q0 = qs[0], q1 = qs[1];
    const int q[8] = {int(q0.x), int(q0.y), int(q0.z), int(q0.w), int(q1.x), int(q1.y), int(q1.z), int(q1.w)};
    int lo[8], hi[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      lo[k] = q[k] & kLo;
      hi[k] = (q[k] >> 4) & kLo;
    }
    if constexpr (kFifth) {  // bit s of qh[l]: the fifth bit of element 32 s + l
      const uint4* qhp = reinterpret_cast<const uint4*>(blk + 16);
      const uint4 h0 = qhp[0], h1 = qhp[1];
      const int qh[8] = {int(h0.x), int(h0.y), int(h0.z), int(h0.w), int(h1.x), int(h1.y), int(h1.z), int(h1.w)};
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        lo[k] |= ((qh[k] >> (2 * c)) & kBit) << 4;
        hi[k] |= ((qh[k] >> (2 * c + 1)) & kBit) << 4;
      }
    }
    const int s1 = dp4a4(lo[4], lo[5], lo[6], lo[7], a.lo[1], dp4a4(lo[0], lo[1], lo[2], lo[3], a.lo[0], 0));
    const int s2 = dp4a4(hi[4], hi[5], hi[6], hi[7], a.hi[1], dp4a4(hi[0], hi[1], hi[2], hi[3], a.hi[0], 0));
    int sc[2], mn[2];
    scale_min_k4_pair(c, head.y, head.z, head.w, sc, mn);
    const float d = half_lo(head.x), dmin = half_hi(head.x);
    return d * (static_cast<float>(sc[0]) * a.ds.x * static_cast<float>(s1) +
                static_cast<float>(sc[1]) * a.ds.z * static_cast<float>(s2)) -
           dmin * (static_cast<float>(mn[0]) * a.ds.y + static_cast<float>(mn[1]) * a.ds.w);
  }
};

// ---------------------------------------------------------------------------------------------
// The kernel.
// ---------------------------------------------------------------------------------------------
struct StreamArgs {
  Segments seg;
  const uint8_t* w2;
  int64_t cols;
  ActQ8 x;
  int act;
  unsigned group_end[kMaxGemvSegments];  // row groups of segments 0..s (cumulative)
  unsigned groups;
};

template <class F, int kMats>
struct StreamShape {
  static constexpr int kChunk = F::kChunk / kMats;  // blocks per row piece
  __host__ __device__ static constexpr int block_bytes() {
    int n = 0;
    for (int p = 0; p < F::kPlanes; ++p) n += F::plane_bytes(p);
    return n;
  }
  __host__ __device__ static constexpr int plane_offset(int p) {  // of plane p in a piece
    int n = 0;
    for (int q = 0; q < p; ++q) n += kChunk * F::plane_bytes(q);
    return n;
  }
  static constexpr int kPiece = kChunk * block_bytes();        // bytes per row piece
  static constexpr int kStage = kMats * kWarpsPerCta * kPiece;  // bytes per stage
  static constexpr int kRing = 128 + kStreamStages * kStage;    // barriers + stages
};
__host__ __device__ constexpr int64_t stream_act_bytes(int64_t cols) { return cols + cols / 32 * 8; }

template <class F, GemvOut kOut>
__global__ void __launch_bounds__(kThreads, kCtasPerSm) gemv_stream_kernel(StreamArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kMats = kOut == GemvOut::kGateUp ? 2 : 1;
  using Shape = StreamShape<F, kMats>;
  constexpr int kChunk = Shape::kChunk, kPiece = Shape::kPiece, kStage = Shape::kStage;
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint8_t* ring = smem + 128;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t blocks = a.cols / F::kBlockElems;
  const int chunks = static_cast<int>((blocks + kChunk - 1) / kChunk);
  const unsigned g0 = static_cast<unsigned>(uint64_t{blockIdx.x} * a.groups / gridDim.x);
  const unsigned g1 = static_cast<unsigned>(uint64_t{blockIdx.x + 1} * a.groups / gridDim.x);
  const int items = static_cast<int>(g1 - g0) * chunks;
  // Item i: row group g0 + i / chunks (segment s, rows [r0, r0 + nr)), K chunk i % chunks.
  struct Item {
    int s, nr, kc, nb;
    int64_t r0, rows;
  };
  auto item = [&](int i) {
    Item it;
    const unsigned g = g0 + static_cast<unsigned>(i / chunks);
    it.s = (a.seg.n > 1 && g >= a.group_end[0]) + (a.seg.n > 2 && g >= a.group_end[1]);
    const unsigned first = it.s == 0 ? 0u : it.s == 1 ? a.group_end[0] : a.group_end[1];
    it.rows = it.s == 0 ? a.seg.rows[0] : it.s == 1 ? a.seg.rows[1] : a.seg.rows[2];
    it.r0 = int64_t{g - first} * kWarpsPerCta;
    it.nr = static_cast<int>(min(int64_t{kWarpsPerCta}, it.rows - it.r0));
    it.kc = i % chunks;
    it.nb = static_cast<int>(min(int64_t{kChunk}, blocks - int64_t{it.kc} * kChunk));
    return it;
  };
  // Warp 0: item i's row pieces into its stage, one bulk copy per (matrix, row, plane), spread
  // over the lanes after lane 0 has announced the stage's bytes.
  auto issue = [&](int i, uint64_t policy) {
    const Item it = item(i);
    const int slot = i % kStreamStages;
    if (lane == 0) {
      uint32_t bytes = 0;
      for (int p = 0; p < F::kPlanes; ++p) bytes += static_cast<uint32_t>(it.nb * F::plane_bytes(p));
      mbar_arrive_expect_tx(&full[slot], static_cast<uint32_t>(kMats * it.nr) * bytes);
    }
    __syncwarp();
    const uint8_t* w0 = it.s == 0 ? a.seg.w[0] : it.s == 1 ? a.seg.w[1] : a.seg.w[2];
    const int64_t n_blocks = it.rows * blocks;
    for (int k = lane; k < kMats * it.nr * F::kPlanes; k += 32) {
      const int p = k % F::kPlanes, r = (k / F::kPlanes) % it.nr, m = k / (F::kPlanes * it.nr);
      int64_t plane_base = 0;  // plane p of the matrix starts after the planes before it
      for (int q = 0; q < p; ++q) plane_base += n_blocks * F::plane_bytes(q);
      const int64_t gb = (it.r0 + r) * blocks + int64_t{it.kc} * kChunk;
      bulk_copy_g2s(ring + slot * kStage + (m * kWarpsPerCta + r) * kPiece + Shape::plane_offset(p),
                    (m == 0 ? w0 : a.w2) + plane_base + gb * F::plane_bytes(p),
                    static_cast<uint32_t>(it.nb * F::plane_bytes(p)), &full[slot], policy);
    }
  };
  uint64_t policy = 0;
  if (warp == 0) {
    policy = l2_evict_first_policy();
    if (lane == 0) {
      for (int s = 0; s < kStreamStages; ++s) mbar_init(&full[s], 1);
      mbar_init_fence();
    }
    __syncwarp();
    for (int i = 0; i < min(items, kStreamStages); ++i) issue(i, policy);
  }
  pdl_begin();
  // The activations into shared memory behind the ring (every warp reads all of them).
  int4* act = reinterpret_cast<int4*>(ring + kStreamStages * kStage);
  const int64_t q16 = a.cols / 16;
  for (int64_t i = threadIdx.x; i < q16; i += kThreads) act[i] = __ldg(reinterpret_cast<const int4*>(a.x.q) + i);
  float2* act_ds = reinterpret_cast<float2*>(act + q16);
  for (int64_t i = threadIdx.x; i < a.cols / 32; i += kThreads) act_ds[i] = __ldg(a.x.ds + i);
  __syncthreads();
  const ActQ8 x{reinterpret_cast<const int8_t*>(act), act_ds};
  constexpr int kBlocksPerStep = 32 / F::kLanes;
  const int slot_b = lane / F::kLanes, sub = lane % F::kLanes;
  float acc[kMats] = {};
  for (int i = 0; i < items; ++i) {
    const Item it = item(i);
    const int slot = i % kStreamStages;
    mbar_wait(&full[slot], static_cast<uint32_t>(i / kStreamStages) & 1u);
    if (warp < it.nr) {
      const uint8_t* stage = ring + slot * kStage + warp * kPiece;
#pragma unroll
      for (int u = 0; u < (kChunk + kBlocksPerStep - 1) / kBlocksPerStep; ++u) {
        const int bb = slot_b + kBlocksPerStep * u;
        if (bb < it.nb) {
          const typename F::Act xa = F::load_act(x, int64_t{it.kc} * kChunk + bb, sub);
#pragma unroll
          for (int m = 0; m < kMats; ++m)
            acc[m] += F::template dot<kChunk>(stage + m * kWarpsPerCta * kPiece, bb, xa, sub);
        }
      }
      if (it.kc == chunks - 1) {  // the row is complete: the epilogue of the warp-per-row kernel
        float* y = it.s == 0 ? a.seg.y[0] : it.s == 1 ? a.seg.y[1] : a.seg.y[2];
        const int64_t row = it.r0 + warp;
        if constexpr (kOut == GemvOut::kGateUp) {
          const float g = warp_sum(acc[0]), u = warp_sum(acc[1]);
          if (lane == 0) y[row] = gate_activation(g, a.act) * u;
        } else {
          const float v = warp_sum(acc[0]);
          if (lane == 0) y[row] = kOut == GemvOut::kAdd ? y[row] + v : v;
        }
#pragma unroll
        for (int m = 0; m < kMats; ++m) acc[m] = 0.0f;
      }
    }
    __syncthreads();  // every warp is done with the stage: refill it
    if (warp == 0 && i + kStreamStages < items) issue(i + kStreamStages, policy);
  }
#endif
}

template <class F, GemvOut kOut>
cudaError_t launch(const StreamArgs& a, size_t smem, cudaStream_t s) {
  static const cudaError_t attr =
      cudaFuncSetAttribute(gemv_stream_kernel<F, kOut>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  if (attr != cudaSuccess) return attr;
  const unsigned grid = std::min<unsigned>(a.groups, static_cast<unsigned>(kCtasPerSm * sm_count()));
  return launch_pdl(gemv_stream_kernel<F, kOut>, dim3(grid), dim3(kThreads), smem, s, a);
}

// The format's entry: whether it can take the shape, then the launch by epilogue.
template <class F>
cudaError_t launch_format(const StreamArgs& a, GemvOut out, cudaStream_t s, bool* taken) {
  const int64_t blocks = a.cols / F::kBlockElems;
  if (a.cols % F::kBlockElems != 0 || blocks % F::kPlaneAlign != 0) return cudaSuccess;
  const int64_t ring = out == GemvOut::kGateUp ? StreamShape<F, 2>::kRing : StreamShape<F, 1>::kRing;
  const int64_t smem = ring + stream_act_bytes(a.cols);
  if (smem > 200 * 1024) return cudaSuccess;
  *taken = true;
  const auto sz = static_cast<size_t>(smem);
  switch (out) {
    case GemvOut::kStore: return launch<F, GemvOut::kStore>(a, sz, s);
    case GemvOut::kAdd: return launch<F, GemvOut::kAdd>(a, sz, s);
    case GemvOut::kGateUp: return launch<F, GemvOut::kGateUp>(a, sz, s);
  }
  *taken = false;
  return cudaErrorInvalidValue;
}

}  // namespace

// The dispatch table of the streamed family: one entry per format.
cudaError_t gemv_stream(const Segments& seg, const uint8_t* w2, uint32_t type, int64_t cols, ActQ8 x, GemvOut out,
                        int act, cudaStream_t s, bool* taken) {
  *taken = false;
  StreamArgs a{seg, w2, cols, x, act, {}, 0};
  bool aligned = out != GemvOut::kGateUp || reinterpret_cast<uintptr_t>(w2) % 16 == 0;
  for (int i = 0; i < seg.n; ++i) {
    a.groups += static_cast<unsigned>((seg.rows[i] + kWarpsPerCta - 1) / kWarpsPerCta);
    a.group_end[i] = a.groups;
    aligned = aligned && reinterpret_cast<uintptr_t>(seg.w[i]) % 16 == 0;
  }
  if (!aligned || cols % 32 != 0) return cudaSuccess;
  switch (type) {
    case kQ4_K: return launch_format<KQuantStream<false>>(a, out, s, taken);
    case kQ5_K: return launch_format<KQuantStream<true>>(a, out, s, taken);
    default: return cudaSuccess;
  }
}

}  // namespace bw24::cuda::gemv_detail
