// Weight expansion to bf16 for the prefill GEMM (cuda/gemm/gemm.cuh): one thread per 8
// consecutive weights of a row, one 16-byte store. Bytes: the quantized row in, 2 bytes per weight
// out; bandwidth bound: ~30 us for a 4096 x 12288 Q4_K matrix (100 MB written) at 3.5 TB/s.
//
// Layouts as the int8 GEMV reads them (cuda/gemv/gemv_q8.cu, lib/quant/repack.h): planes for
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q6_K, IQ4_XS (plane p of a tensor of N blocks starts at N * bytes
// before it; Q6_K's planes cut by tiles, cuda/common/q6k_tiles.cuh), file layout for Q4_K and Q5_K.
// gb = row * blocks_per_row + block indexes a block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/common/check.cuh"
#include "cuda/common/ggml_types.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/q6k_tiles.cuh"
#include "cuda/gemm/expand.cuh"
#include "cuda/gemm/gemm.cuh"

namespace bw24::cuda {
namespace {

// Each format: kBlockElems, and get8(w, n_blocks, row_blocks, gb, e, v): weights [e, e + 8) of
// block gb as floats (e a multiple of 8). A thread makes 8 outputs, one 16-byte store: a warp
// writes 512 contiguous bytes per store instruction (a thread per 32 weights with four stores at a
// 64-byte stride measured 1.5 TB/s of writes, ncu).
__device__ __forceinline__ uint2 load8(const uint8_t* p) { return __ldg(reinterpret_cast<const uint2*>(p)); }
__device__ __forceinline__ void bytes8(uint2 v, uint8_t* b) { *reinterpret_cast<uint2*>(b) = v; }

struct Q4_0 {  // qs[16] | d. Byte j: element j (low nibble), j + 16 (high). w = (q - 8) d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const float d = half_at(w + n * 16 + gb * 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * (((q[j] >> shift) & 15) - 8);
  }
};

struct Q4_1 {  // qs[16] | (d, m). w = q d + m
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const float d = half_at(w + n * 16 + gb * 4), m = half_at(w + n * 16 + gb * 4 + 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * ((q[j] >> shift) & 15) + m;
  }
};

struct Q5_0 {  // qs[16] | qh (u32, bit j = fifth bit of element j) | d. w = (q - 16) d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const uint32_t qh = __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb) >> e;
    const float d = half_at(w + n * 20 + gb * 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * (static_cast<int>(((q[j] >> shift) & 15) | (((qh >> j) & 1) << 4)) - 16);
  }
};

struct Q5_1 {  // qs[16] | qh (u32) | (d, m). w = q d + m, q in [0, 31]
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    uint8_t q[8];
    bytes8(load8(w + gb * 16 + (e & 15)), q);
    const uint32_t qh = __ldg(reinterpret_cast<const uint32_t*>(w + n * 16) + gb) >> e;
    const float d = half_at(w + n * 20 + gb * 4), m = half_at(w + n * 20 + gb * 4 + 2);
    const int shift = e < 16 ? 0 : 4;
    for (int j = 0; j < 8; ++j) v[j] = d * static_cast<int>(((q[j] >> shift) & 15) | (((qh >> j) & 1) << 4)) + m;
  }
};

struct Q8_0 {  // qs[32] | d. w = q d
  static constexpr int kBlockElems = 32;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    int8_t q[8];
    bytes8(load8(w + gb * 32 + e), reinterpret_cast<uint8_t*>(q));
    const float d = half_at(w + n * 32 + gb * 2);
    for (int j = 0; j < 8; ++j) v[j] = d * q[j];
  }
};

// Q4_K file layout [d, dmin | scales[12] | qs[128]]: sub-block s = 2c + h (elements [32 s, 32 s +
// 32)) holds qs[32c + l]'s low (h = 0) or high (h = 1) nibbles; w = d sc_s q - dmin m_s. Q5_K
// (kFifth) [d, dmin | scales[12] | qh[32] | qs[128]]: the same, and the fifth bit of element 32 s + l
// is bit s of qh[l].
template <bool kFifth>
struct KQuant {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int e, float* v) {
    const uint8_t* blk = w + gb * (kFifth ? 176 : 144);
    const int s = e / 32, l0 = e % 32;
    const uint4 head = __ldg(reinterpret_cast<const uint4*>(blk));
    uint8_t q[8], qh[8];
    bytes8(load8(blk + (kFifth ? 48 : 16) + 32 * (s / 2) + l0), q);
    if constexpr (kFifth) bytes8(load8(blk + 16 + l0), qh);
    q4k_expand8(head, q, s, v, kFifth ? qh : nullptr);
  }
};
using Q4_K = KQuant<false>;
using Q5_K = KQuant<true>;

// Q6_K planes ql[128] | qh[64] | scales[16] (int8) | d. Sub-block s = 4 half + j (elements
// 128 half + 32 j + l): low 4 bits from ql[64 half + 32 (j & 1) + l] (nibble j / 2), top two from
// qh[32 half + l] bits 2j; scale index 8 half + 2j + l / 16; w = d sc (q - 32).
struct Q6_K {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t row_blocks, int64_t gb, int e, float* v) {
    const int s = e / 32, l0 = e % 32, half = s / 4, j = s % 4;
    const Q6KTiles t(n, row_blocks);  // planes cut by tiles (cuda/common/q6k_tiles.cuh)
    uint8_t ql[8], qh[8];
    bytes8(load8(w + t.ql(gb) + 64 * half + 32 * (j & 1) + l0), ql);
    bytes8(load8(w + t.qh(gb) + 32 * half + l0), qh);
    const int8_t sc = reinterpret_cast<const int8_t*>(w + t.sc(gb))[8 * half + 2 * j + l0 / 16];
    q6k_expand8(ql, qh, j, half_at(w + t.d(gb)) * sc, v);
  }
};

// IQ4_XS planes qs[128] | (d, scales_h, scales_l[4]): sub-block ib = e / 32, qs[16 ib + j] holds
// elements j (low nibble) and j + 16 (high) as level indices; w = d (ls - 32) level.
struct IQ4_XS {
  static constexpr int kBlockElems = 256;
  __device__ static void get8(const uint8_t* w, int64_t n, int64_t, int64_t gb, int e, float* v) {
    const int ib = e / 32, l0 = e % 32;
    const uint2 q = load8(w + gb * 128 + 16 * ib + (l0 & 15));
    const uint8_t* hb = w + n * 128 + gb * 8;
    const int scales_h = hb[2] | (hb[3] << 8);
    const int ls = ((hb[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
    const float dl = half_at(hb) * static_cast<float>(ls - 32);
    const int shift = l0 < 16 ? 0 : 4;
    const int lv[2] = {iq4_levels((q.x >> shift) & 0x0F0F0F0Fu), iq4_levels((q.y >> shift) & 0x0F0F0F0Fu)};
    const int8_t* b = reinterpret_cast<const int8_t*>(lv);
    for (int j = 0; j < 8; ++j) v[j] = dl * b[j];
  }
};

// F16 and BF16: 8 values, one 16-byte load.
template <typename H>
struct Float16 {
  static constexpr int kBlockElems = 8;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int, float* v) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(w) + gb);
    const H* h = reinterpret_cast<const H*>(&raw);
    for (int j = 0; j < 8; ++j) v[j] = static_cast<float>(h[j]);
  }
};
using F16 = Float16<__half>;
using BF16 = Float16<bf16>;

// F32 (MoE routers, which llama-quantize leaves in F32): 8 values, two 16-byte loads.
struct F32 {
  static constexpr int kBlockElems = 8;
  __device__ static void get8(const uint8_t* w, int64_t, int64_t, int64_t gb, int, float* v) {
    const float4 lo = __ldg(reinterpret_cast<const float4*>(w) + 2 * gb), hi = __ldg(reinterpret_cast<const float4*>(w) + 2 * gb + 1);
    v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
  }
};

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

// The dispatch table of the expansion: one entry per format.
cudaError_t expand(const void* w, uint32_t type, int64_t rows, int64_t cols, int64_t row0, int64_t n_rows, bf16* out,
                   int slices, int64_t slice_bytes, cudaStream_t s) {
  switch (type) {
    case kF32: return launch<F32>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kF16: return launch<F16>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kBF16: return launch<BF16>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ4_0: return launch<Q4_0>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ4_1: return launch<Q4_1>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ5_0: return launch<Q5_0>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ5_1: return launch<Q5_1>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ8_0: return launch<Q8_0>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ4_K: return launch<Q4_K>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ5_K: return launch<Q5_K>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kQ6_K: return launch<Q6_K>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    case kIQ4_XS: return launch<IQ4_XS>(w, rows, cols, row0, n_rows, out, slices, slice_bytes, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool gemm_supports(uint32_t t) {
  return t == kF16 || t == kBF16 || t == kQ4_0 || t == kQ4_1 || t == kQ5_0 || t == kQ5_1 || t == kQ8_0 || t == kQ4_K ||
         t == kQ5_K || t == kQ6_K || t == kIQ4_XS;
}
bool dequant_bf16_supports(uint32_t t) { return t == kF32 || gemm_supports(t); }

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
