// The ggml type ids (formats.md §2.1) the CUDA kernels dispatch on: the host side names them in
// lib/core/dtype.h (GgmlType), which cuda/ does not include (CUDA and standard headers only), so
// they are written once here for every kernel family (GEMV, GEMM and expansion, MoE router).
#pragma once

#include <cstdint>

namespace bw24::cuda {

enum GgmlTypeId : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14,
  kIQ4_XS = 23, kBF16 = 30
};

}  // namespace bw24::cuda
