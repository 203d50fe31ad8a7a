// The CUDA backend's host files (the cuda_runner*.cpp files, device_weights.cpp): a CUDA error as a Status.
#pragma once

#include <cuda_runtime.h>

#include "lib/core/status.h"

namespace bw24::engine {

inline absl::Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return absl::OkStatus();
  if (e == cudaErrorMemoryAllocation) return error(Code::kOutOfMemory, "CUDA {}: out of device memory", what);
  return error(Code::kDevice, "CUDA {}: {}", what, cudaGetErrorString(e));
}

}  // namespace bw24::engine

#define BW24_CUDA_OK(expr, what) BW24_RETURN_IF_ERROR(::bw24::engine::cuda_status((expr), what))
