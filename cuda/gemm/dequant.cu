// Weight expansion to bf16 for the prefill GEMM (cuda/gemm/gemm.cuh): one thread per 8
// consecutive weights of a row, one 16-byte store. Bytes: the quantized row in, 2 bytes per weight
// out; bandwidth bound: ~30 us for a 4096 x 12288 Q4_K matrix (100 MB written) at 3.5 TB/s.
// The formats' eight-weight reads: cuda/common/weight_octets.cuh.
#include <cuda_bf16.h>

#include "cuda/common/launch.cuh"
#include "cuda/common/weight_octets.cuh"
#include "cuda/gemm/gemm.cuh"

namespace bw24::cuda {
namespace {

using namespace octets;  // the formats (cuda/common/weight_octets.cuh)

template <class F>
__global__ void dequant_kernel(const uint8_t* w, int64_t rows, int64_t cols, int64_t row0, int64_t n_octets, bf16* out,
                               int64_t slice_bytes) {
  pdl_begin();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_octets) return;
  w += blockIdx.y * slice_bytes;  // slice y (an expert of a stack): its own tensor of rows x cols
  out += blockIdx.y * n_octets * 8;
  const int64_t per_row = cols / 8, blocks = cols / F::kBlockElems;
  const int64_t r = i / per_row, c = (i % per_row) * 8;
  float v[8];
  F::get8(w, rows * blocks, blocks, (row0 + r) * blocks + c / F::kBlockElems, static_cast<int>(c % F::kBlockElems), v);
  alignas(16) bf16 b[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) b[j] = __float2bfloat16_rn(v[j]);
  reinterpret_cast<uint4*>(out)[i] = *reinterpret_cast<const uint4*>(b);
}

template <class F>
cudaError_t launch(const void* w, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows, bf16* out, int slices,
                   int64_t slice_bytes, cudaStream_t s) {
  if (cols % F::kBlockElems != 0 || cols % 8 != 0) return cudaErrorInvalidValue;
  const int64_t octets = n_rows * (cols / 8);
  constexpr int kThreads = 256;
  const dim3 grid(static_cast<unsigned>((octets + kThreads - 1) / kThreads), static_cast<unsigned>(slices));
  return launch_pdl(dequant_kernel<F>, grid, dim3(kThreads), 0, s, static_cast<const uint8_t*>(w), rows, cols, row0,
                    octets, out, slice_bytes);
}

// The expansion of one format: launch<F> through the formats' dispatch table (weight_octets.cuh).
cudaError_t expand(const void* w, uint32_t type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows, bf16* out,
                   int slices, int64_t slice_bytes, cudaStream_t s) {
  return with_format(type, [&](auto f) {
    return launch<decltype(f)>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
  });
}

}  // namespace

bool gemm_supports(uint32_t t) { return t != kF32 && octets::supported(t); }
bool dequant_bf16_supports(uint32_t t) { return octets::supported(t); }

cudaError_t dequant_bf16(const void* w, uint32_t type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows,
                         bf16* out, cudaStream_t s) {
  if (n_rows <= 0) return cudaSuccess;
  if (row0 < 0 || row0 + n_rows > rows || cols <= 0) return cudaErrorInvalidValue;
  return expand(w, type, rows, cols, row0, n_rows, out, 1, 0, s);
}

cudaError_t dequant_bf16_slices(const void* w, uint32_t type, int64_t rows, int64_t cols, int64_t slice_bytes,
                                int slices, bf16* out, cudaStream_t s) {
  if (slices <= 0 || rows <= 0) return cudaSuccess;
  if (cols <= 0 || slice_bytes <= 0 || slices > 65535) return cudaErrorInvalidValue;
  return expand(w, type, rows, cols, 0, rows, out, slices, slice_bytes, s);
}

}  // namespace bw24::cuda
