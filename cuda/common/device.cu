#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace bw24::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

bool device_properties(int ordinal, char* name, int name_cap, int* cc_major, int* cc_minor,
                       unsigned long long* total_bytes) {
  cudaDeviceProp p;
  if (ordinal < 0 || ordinal >= device_count() || cudaGetDeviceProperties(&p, ordinal) != cudaSuccess)
    return false;
  if (name && name_cap > 0) {
    std::strncpy(name, p.name, static_cast<size_t>(name_cap) - 1);
    name[name_cap - 1] = '\0';
  }
  if (cc_major) *cc_major = p.major;
  if (cc_minor) *cc_minor = p.minor;
  if (total_bytes) *total_bytes = p.totalGlobalMem;
  return true;
}

}  // namespace bw24::cuda

namespace bw24::cuda {

double copy_bandwidth_gbs(int ordinal) {
  if (cudaSetDevice(ordinal) != cudaSuccess) return 0;
  const size_t bytes = size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    cudaGetLastError();
    return 0;
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  double runs[5];
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  for (double& r : runs) {
    cudaEventRecord(e0);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    r = 2.0 * bytes / (ms * 1e-3) / 1e9;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  std::sort(runs, runs + 5);
  return runs[2];
}

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

SmLimits sm_limits() {
  static std::atomic<int64_t> cache[64][3] = {};  // 0: not asked yet
  int dev = 0;
  SmLimits sm;
  if (cudaGetDevice(&dev) != cudaSuccess) return sm;
  if (dev < 64 && cache[dev][0].load(std::memory_order_acquire) > 0)  // the other two stored before it
    return {cache[dev][0].load(std::memory_order_relaxed), cache[dev][1].load(std::memory_order_relaxed),
            cache[dev][2].load(std::memory_order_relaxed)};
  int smem = 0, reserved = 0, regs = 0;
  if (cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&regs, cudaDevAttrMaxRegistersPerMultiprocessor, dev) == cudaSuccess && smem > 0 &&
      regs > 0)
    sm = {smem, reserved, regs};
  else
    cudaGetLastError();
  if (dev < 64) {
    cache[dev][1].store(sm.smem_reserved_per_cta, std::memory_order_relaxed);
    cache[dev][2].store(sm.regs, std::memory_order_relaxed);
    cache[dev][0].store(sm.smem, std::memory_order_release);
  }
  return sm;
}

namespace {
// Compute capability (10 major + minor) of the current device, cached per ordinal: a launch must
// not pay an attribute query. 0 if there is none.
int current_cc() {
  static std::atomic<int> cached[64] = {};  // 0 unknown, else cc + 1
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return 0;
  if (cached[dev].load(std::memory_order_relaxed) == 0) {
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    cached[dev].store(10 * major + minor + 1, std::memory_order_relaxed);
  }
  return cached[dev].load(std::memory_order_relaxed) - 1;
}
}  // namespace

bool pdl_supported() { return current_cc() >= 90; }

bool env_switch(std::atomic<int>& state, const char* name) {
  int v = state.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv(name);
    v = (e && e[0] == '0') ? 0 : 1;
    state.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

bool wgmma_supported() {
#ifdef BW24_SM90A
  return current_cc() == 90;
#else
  return false;
#endif
}

}  // namespace bw24::cuda
