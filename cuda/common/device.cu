#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"

#include <cuda_runtime.h>

#include <atomic>
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

bool pdl_supported() {
  // Cached per device ordinal: a launch must not pay an attribute query.
  static std::atomic<int> cached[64] = {};  // 0 unknown, 1 no, 2 yes
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return false;
  if (cached[dev].load(std::memory_order_relaxed) == 0) {
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cached[dev].store(major >= 9 ? 2 : 1, std::memory_order_relaxed);
  }
  return cached[dev].load(std::memory_order_relaxed) == 2;
}

}  // namespace bw24::cuda
