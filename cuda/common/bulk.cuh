// Bulk copies from global into shared memory, completed on an mbarrier (sm_90: cp.async.bulk, the
// one-dimensional form of the tensor memory accelerator). One thread issues a whole stage of a
// ring with a few instructions; the bytes travel without registers, so the bytes a CTA keeps in
// flight are bounded by shared memory (228 KB per SM), not by registers per lane (kernels-hopper.md
// §1.2, §1.4). Rules from the PTX ISA: source and destination 16-byte aligned, size a multiple of
// 16. Only for __CUDA_ARCH__ >= 900; callers choose another kernel on older devices.
#pragma once

#include <cstdint>

#include "cuda/common/mma.cuh"  // smem_addr

namespace bw24::cuda {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// Barrier for `count` arrivals; make the initialisation visible to the async proxy (the copies).
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// One arrival that also announces `bytes` of copies still to land in the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// One plain arrival (a consumer warp releasing a stage it has read).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// A float into shared memory of CTA `rank` of the cluster at the offset of `local` (the same
// variable in that CTA), its 4 bytes counted on that CTA's mbarrier at the offset of `bar`.
__device__ __forceinline__ void st_async_cluster(float* local, float v, uint64_t* bar, uint32_t rank) {
  uint32_t remote, remote_bar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(local)), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_bar) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
               "r"(__float_as_uint(v)), "r"(remote_bar)
               : "memory");
}

// The cluster barrier in two halves, every thread of each CTA taking part (warp-aligned): an arrival
// with no ordering of its own (after mbar_init_fence, it publishes the CTA's barriers), and the wait
// (acquire) before the first write into another CTA's shared memory.
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }

// mbar_wait with cluster-scope acquire: for a phase completed by other CTAs' st.async.
__device__ __forceinline__ void mbar_wait_cluster(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Wait until the phase with this parity has completed (arrivals done and all bytes landed).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// bytes from global src to shared dst; completion counted on bar. The weights are read once per
// token: L2 evict-first, so they do not push out the activations and KV the next kernels read.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar,
                                              uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}
// bytes at global src (16-byte aligned, a multiple of 16) requested into L2, no completion to wait
// for. An SM issues these at ~250 GB/s and its CTA lives until they are issued (bw24-microbench
// l2_prefetch, docs/performance.md round 47): not for megabytes from few CTAs.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}
// The box of a 2D tensor map (CUtensorMap, built on the host by cuTensorMapEncodeTiled) whose
// first element is (x: column, y: row) into shared dst, laid out as the map says (the GEMM's
// maps: 128-byte swizzle); elements outside the tensor land as zeros. Completion counted on bar.
__device__ __forceinline__ void tensor_copy_2d(void* dst, const void* map, int x, int y, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
#endif

}  // namespace bw24::cuda
