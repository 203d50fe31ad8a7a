// Microbenchmark probe (bw24-microbench bulk_stream): how fast persistent CTAs stream global memory
// into a shared-memory ring with cp.async.bulk, by the size of one copy, with no arithmetic. The
// streamed GEMV (cuda/gemv/gemv_stream.cu) moves 1.1-2.3 KB per copy and stalled at ~2.1 TB/s
// (gate-up, f55bde0) against a 4.0-4.3 TB/s copy bandwidth: if this probe shows the same cap at
// those copy sizes and not at 8-16 KB, the fixed cost per bulk copy is the limit and the GEMV's
// stages should move whole row groups per copy.
//
// Each CTA takes an even share of the buffer, stages of `stage_bytes` made of stage_bytes /
// copy_bytes copies, `stages` deep; the CTA waits on a stage, sums one word per thread of it (so
// the data is used), syncs, and refills it, as the GEMV did before its producer warp (bf7f063).
// row_bytes > 0 lays a stage out as the streamed GEMV's row pieces: copy c of stage i is row c of
// the stage's row group at piece i % (row_bytes / copy_bytes), rows row_bytes apart (a gate-up's
// 1,152-byte pieces of 2,304-byte rows: half of each row a stage, the other half the next stage).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/common/bulk.cuh"
#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"

namespace bw24::bench {
using namespace bw24::cuda;
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) bulk_stream_kernel(const uint8_t* src, int64_t bytes, int stage_bytes,
                                                                int copy_bytes, int stages, int row_bytes,
                                                                unsigned* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint8_t* ring = smem + 128;
  const int64_t per_cta = bytes / gridDim.x / stage_bytes * stage_bytes;
  const uint8_t* base = src + per_cta * blockIdx.x;
  const int items = static_cast<int>(per_cta / stage_bytes);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int copies = stage_bytes / copy_bytes;
  const int chunks = row_bytes > 0 ? row_bytes / copy_bytes : 1;  // pieces a row (row_bytes: bulk_stream checks)
  uint64_t policy = 0;
  auto issue = [&](int i) {
    const int slot = i % stages;
    if (lane == 0) mbar_arrive_expect_tx(&full[slot], static_cast<uint32_t>(stage_bytes));
    __syncwarp();
    for (int c = lane; c < copies; c += 32) {
      const int64_t from = row_bytes > 0 ? (int64_t{i / chunks} * copies + c) * row_bytes + int64_t{i % chunks} * copy_bytes
                                         : int64_t{i} * stage_bytes + int64_t{c} * copy_bytes;
      bulk_copy_g2s(ring + int64_t{slot} * stage_bytes + int64_t{c} * copy_bytes, base + from,
                    static_cast<uint32_t>(copy_bytes), &full[slot], policy);
    }
  };
  if (warp == 0) {
    policy = l2_evict_first_policy();
    if (lane == 0) {
      for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
      mbar_init_fence();
    }
    __syncwarp();
    for (int i = 0; i < min(items, stages); ++i) issue(i);
  }
  __syncthreads();
  unsigned acc = 0;
  for (int i = 0; i < items; ++i) {
    const int slot = i % stages;
    mbar_wait(&full[slot], static_cast<uint32_t>(i / stages) & 1u);
    acc += reinterpret_cast<const unsigned*>(ring + int64_t{slot} * stage_bytes)[threadIdx.x];
    __syncthreads();
    if (warp == 0 && i + stages < items) issue(i + stages);
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // keeps the reads; never true for a zeroed buffer
#endif
}

}  // namespace

// Streams `bytes` (a multiple of grid x stage_bytes is used) with ctas_per_sm CTAs per SM. Returns
// the launch error; cudaErrorNotSupported below sm_90.
cudaError_t bulk_stream(const void* src, int64_t bytes, int stage_bytes, int copy_bytes, int stages, int ctas_per_sm,
                        int row_bytes, unsigned* sink, cudaStream_t stream) {
  if (!pdl_supported()) return cudaErrorNotSupported;  // the sm_90 gate the streamed GEMV uses too
  if (copy_bytes % 16 != 0 || stage_bytes % copy_bytes != 0 || stages < 1 || stages > 16 || row_bytes < 0 ||
      row_bytes % copy_bytes != 0)  // whole pieces a row, so the stages cover the CTA's share once
    return cudaErrorInvalidValue;
  const size_t smem = 128 + size_t(stages) * stage_bytes;
  const cudaError_t e =
      cudaFuncSetAttribute(bulk_stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  const unsigned grid = static_cast<unsigned>(ctas_per_sm * cuda::sm_count());
  bulk_stream_kernel<<<grid, kThreads, smem, stream>>>(static_cast<const uint8_t*>(src), bytes, stage_bytes, copy_bytes,
                                                      stages, row_bytes, sink);
  return cudaGetLastError();
}

namespace {

// bw24-microbench l2_prefetch (round 47): `ctas` CTAs each request an even share of `bytes`, rounded
// down to whole 16 KB pieces, into L2 by cp.async.bulk.prefetch.L2, dealt over their 256 threads, and
// exit. next265 read ~260 GB/s for one SM from the step's slowdown: if the launch lasts bytes / ctas
// at that rate, a CTA's life is bound to its requests.
__global__ void __launch_bounds__(kThreads) l2_prefetch_kernel(const uint8_t* src, int64_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int64_t kPiece = 16 * 1024;
  const int64_t per_cta = bytes / gridDim.x / kPiece * kPiece;
  const uint8_t* base = src + per_cta * blockIdx.x;
  for (int64_t o = int64_t{threadIdx.x} * kPiece; o < per_cta; o += kThreads * kPiece)
    bulk_prefetch_l2(base + o, static_cast<uint32_t>(kPiece));
#endif
}

}  // namespace

cudaError_t l2_prefetch(const void* src, int64_t bytes, int ctas, cudaStream_t stream) {
  if (!pdl_supported()) return cudaErrorNotSupported;
  if (ctas < 1 || bytes < 0) return cudaErrorInvalidValue;
  l2_prefetch_kernel<<<static_cast<unsigned>(ctas), kThreads, 0, stream>>>(static_cast<const uint8_t*>(src), bytes);
  return cudaGetLastError();
}

}  // namespace bw24::bench
