// Kernel launches chained with Programmatic Dependent Launch (sm_90+, kernels-hopper.md §2.3).
//
// Every kernel of the decode pass starts with pdl_begin(): it lets the next kernel in the stream
// get its CTAs resident as soon as all of this kernel's CTAs have started, then waits until the
// previous kernel has finished and its writes are visible. What a kernel may do before
// pdl_begin(): work that reads nothing another kernel writes (the GEMVs prefetch their weight rows
// into L2 there). Because every kernel waits for its immediate predecessor before touching
// activations, the chain stays ordered transitively. On devices before sm_90 the attribute is not
// set and the two instructions compile to nothing.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "cuda/common/device.h"

namespace bw24::cuda {

// pdl_begin() in two halves, for a kernel with work to do before the wait (flash decode's L2
// prefetch): pdl_trigger() first, so the next kernel's launch is not delayed by that work.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_begin() {
  pdl_trigger();
  pdl_wait();
}

// Whether the current device takes the PDL launch attribute (compute capability >= 9.0).
bool pdl_supported();

// A kernel family's A/B switch: on unless the environment sets `name` to 0, read once into `state`
// (-1: not read yet; 0 / 1 after, or as a test hook stored it).
bool env_switch(std::atomic<int>& state, const char* name);

// Whether the current device runs the sm_90a kernels (wgmma): compute capability 9.0 and a build
// whose CUDA architectures include 90 (CMake builds it as 90a, which defines BW24_SM90A).
bool wgmma_supported();

// Lets kKernel take `bytes` of dynamic shared memory (the opt-in above 48 KB, per device and
// kernel): once for each (a bit per ordinal < 64; beyond, every launch), so a launch pays no
// attribute call after the first. One instantiation, so one flag word, per kernel (not per kernel
// signature: kernels of one type stay apart).
template <auto kKernel>
cudaError_t allow_smem(size_t bytes) {
  static std::atomic<uint64_t> configured{0};
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  const uint64_t bit = dev < 64 ? uint64_t{1} << dev : 0;
  if (!(configured.load(std::memory_order_relaxed) & bit)) {
    const cudaError_t e =
        cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != cudaSuccess) return e;
    configured.fetch_or(bit, std::memory_order_relaxed);
  }
  return cudaSuccess;
}

// Whether one cluster of cluster_x CTAs of kKernel (block threads, smem bytes of dynamic shared
// memory, already allowed by allow_smem) fits on the current device; past the portable 8 it first
// allows the non-portable size. Asked once a device, as allow_smem; a refused query reads false, so
// the caller keeps its unclustered kernel.
template <auto kKernel>
bool cluster_fits(dim3 block, unsigned cluster_x, size_t smem) {
  static std::atomic<uint64_t> checked{0}, fits{0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  const uint64_t bit = dev < 64 ? uint64_t{1} << dev : 0;
  if (bit != 0 && (checked.load(std::memory_order_relaxed) & bit))
    return (fits.load(std::memory_order_relaxed) & bit) != 0;
  bool ok = cluster_x <= 8 || cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(cluster_x);
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim = {cluster_x, 1, 1};
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  ok = ok && cudaOccupancyMaxActiveClusters(&clusters, kKernel, &cfg) == cudaSuccess && clusters > 0;
  cudaGetLastError();  // a refused query is not the caller's error
  if (ok) fits.fetch_or(bit, std::memory_order_relaxed);
  checked.fetch_or(bit, std::memory_order_relaxed);
  return ok;
}

// kKernel's registers a thread and resident CTAs an SM at `threads` a CTA and smem bytes of dynamic shared
// memory on the current device (cudaFuncGetAttributes, the occupancy API): what a grid's waves follow.
template <auto kKernel>
cudaError_t kernel_occupancy(int threads, size_t smem, int* regs, int* ctas_per_sm) {
  cudaFuncAttributes attr{};
  if (const cudaError_t e = cudaFuncGetAttributes(&attr, kKernel); e != cudaSuccess) return e;
  *regs = attr.numRegs;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kKernel, threads, smem);
}

// One CTA of kKernel at `threads` and `dynamic_smem` bytes, as it holds an SM (CtaRoom, device.h).
// The kernel's static shared memory and registers are asked once a device (ordinals < 64; a fat
// binary's instances differ by architecture), so a launch pays no attribute call after the first.
template <auto kKernel>
cudaError_t cta_room(int threads, size_t dynamic_smem, CtaRoom* room) {
  static std::atomic<int64_t> cached[64] = {};  // 0: not asked; else 1 + (static shared bytes << 16 | registers)
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  int64_t v = dev < 64 ? cached[dev].load(std::memory_order_relaxed) - 1 : -1;
  if (v < 0) {
    cudaFuncAttributes at{};
    if (const cudaError_t e = cudaFuncGetAttributes(&at, kKernel); e != cudaSuccess) return e;
    v = static_cast<int64_t>(at.sharedSizeBytes) << 16 | at.numRegs;
    if (dev < 64) cached[dev].store(v + 1, std::memory_order_relaxed);
  }
  room->smem = static_cast<int64_t>(dynamic_smem) + (v >> 16) + sm_limits().smem_reserved_per_cta;
  room->regs = ((v & 0xffff) + 7) / 8 * 8 * threads;
  return cudaSuccess;
}

// kernel<<<grid, block, smem, stream>>>(args...) with the programmatic-serialization attribute
// where supported, and (cluster_x > 1, sm_90 devices only: the caller checks) in clusters of
// cluster_x CTAs along x. Returns the launch error.
template <typename... KArgs, typename... Args>
cudaError_t launch_pdl_cluster(void (*kernel)(KArgs...), dim3 grid, dim3 block, unsigned cluster_x, size_t smem,
                               cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl_supported()) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster_x > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n++].val.clusterDim = {cluster_x, 1, 1};
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<KArgs>(args)...);
}
template <typename... KArgs, typename... Args>
cudaError_t launch_pdl(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       Args&&... args) {
  return launch_pdl_cluster(kernel, grid, block, 1, smem, stream, std::forward<Args>(args)...);
}

}  // namespace bw24::cuda
