// Flash attention prefill (cuda/attention/flash.cuh).
//
// Per CTA: 64 queries of one head, 4 warps x 16 queries. Per key tile of 64: the CTA converts
// K and V (cache rows of any type) into bf16 shared tiles, or (an f16 cache at D <= 128, the
// default: PrefillShape::kAsync) copies them as they are with cp.async one tile ahead and
// multiplies in f16; each warp computes its
// 16 x 64 scores with D / 16 x 8 mma, masks (causal, window), updates the running max and sum of
// its rows (a row lives in the 4 lanes of a quad: two shuffles), rescales its O accumulators and
// adds P V (P goes from the score accumulators straight into A fragments: the m16n8 C layout of two
// adjacent key tiles is the m16k16 A layout). Scores are kept in log2 units (Q pre-scaled by
// scale * log2 e) so the softmax uses exp2.
//
// Shared rows are D bf16 = D / 8 chunks of 16 bytes; chunk c of row r sits at c ^ (r & 7) so the
// 8 row addresses of an ldmatrix (8 consecutive rows, one logical chunk) hit 8 distinct bank groups.
//
// Napkin math (Qwen3-8B, 512-token prefill, per layer): 32 heads x 8 query tiles x 4.5 key tiles on
// average x 64 KB of f32 K/V = 74 MB of L2 reads, ~10 us; the mma work is ~1 GFLOP. The f32 cache
// is the cost: an f16 cache halves it and lets cp.async move tiles without a conversion.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include <type_traits>

#include "cuda/attention/flash.cuh"
#include "cuda/attention/kv_load.cuh"
#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/common/mma.cuh"

namespace bw24::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kTile = 64, kThreads = 128;

// Element offset of (row, chunk) in a [rows][D] tile.
template <int D>
__device__ __forceinline__ int off(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) << 3);
}

// Two floats as one fragment register of the tiles' 16-bit type (bf16 or f16), and the MMA on them.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) return pack_f16(lo, hi);
  else return pack_bf16(lo, hi);
}
template <typename T>
__device__ __forceinline__ void mma16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) mma_f16(c, a, b0, b1);
  else mma_bf16(c, a, b0, b1);
}

// 8 elements of src (a float / half pointer or KvQ8; !valid: zeros) times s as T (bf16 or f16)
// into 16 bytes of shared memory.
template <typename T, typename Src>
__device__ __forceinline__ void store8(T* dst, bool valid, Src src, float s) {
  float v[8] = {};
  if (valid) load8(src, v);
  *reinterpret_cast<uint4*>(dst) = make_uint4(pack2<T>(v[0] * s, v[1] * s), pack2<T>(v[2] * s, v[3] * s),
                                              pack2<T>(v[4] * s, v[5] * s), pack2<T>(v[6] * s, v[7] * s));
}

// Head sizes up to 128 keep the warp's Q fragments in registers (D / 4 a thread) and stage Q
// through the K tile; at 256 the O accumulators alone take 128 registers a thread, so Q stays in a
// third shared tile and each key tile reads its fragments from there (ldmatrix, 32 KB a CTA).
// Shared memory (dynamic): K and V tiles, 2 x 64 x D bf16 (16 / 32 / 64 KB), + the Q tile at 256.
//
// kAsync (an f16 cache, the default, at D <= 128): the tiles stay f16 as the cache holds them, so
// cp.async copies them straight into their swizzled slots, two stages deep: key tile j + 1 is in
// flight while tile j is multiplied (Q and P become f16, the MMAs f16 with f32 accumulators).
// Why: the converting loads are synchronous, so every key tile paid its load latency before its
// MMAs; a 512-token Qwen3-8B layer took ~35 us (ncu, 718253f) for ~1 GFLOP and ~20 MB of L2 reads,
// the last query tile's 8 key tiles in a row being the critical path. Shared: 2 x 2 x 64 x D f16.
template <int D, typename Kv>
struct PrefillShape {
  static constexpr bool kQShared = D > 128;
  static constexpr bool kAsync = std::is_same_v<Kv, const __half*> && !kQShared;
  using T = std::conditional_t<kAsync, __half, bf16>;  // the shared tiles' element
  static constexpr int kStages = kAsync ? 2 : 1;
  static constexpr size_t kSmem = (size_t{2} * kStages + (kQShared ? 1 : 0)) * kTile * D * 2;
};

// Kv: const float*, const __half* or KvQ8 (kv_load.cuh).
template <int D, typename Kv>
__global__ void __launch_bounds__(kThreads) flash_prefill_kernel(float* out, const float* q, Kv kc, Kv vc,
                                                                  int n_tokens, int n_head, int n_head_kv,
                                                                  DevicePos pos, int window, float scale) {
  constexpr int kChunks = D / 8;
  using Shape = PrefillShape<D, Kv>;
  using T = typename Shape::T;
  constexpr bool kQShared = Shape::kQShared, kAsync = Shape::kAsync;
  extern __shared__ uint4 smem_raw[];
  T* sk = reinterpret_cast<T*>(smem_raw);  // stage s: K at sk + 2 s kTile D, V after it
  T* sv = sk + kTile * D;
  T* sq = kQShared ? sv + kTile * D : sk;  // the Q tile (through sk where Q lives in registers)
  pdl_begin();
  const int h = blockIdx.y, t0 = blockIdx.x * kTile, g = h / (n_head / n_head_kv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t kvw = int64_t{n_head_kv} * D;
  const int64_t p0 = pos.base + (pos.dev ? *pos.dev : 0);

  // The Q tile, pre-scaled into log2 units, into sq and (D <= 128) from there into A fragments.
  for (int i = threadIdx.x; i < kTile * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks, t = t0 + r;
    store8(sq + off<D>(r, c), t < n_tokens, q + (int64_t{t} * n_head + h) * D + 8 * c, scale * 1.4426950408889634f);
  }
  __syncthreads();
  uint32_t qf[kQShared ? 1 : D / 16][4];
  if constexpr (!kQShared) {
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) ldmatrix_x4(qf[ks], sq + off<D>(warp * 16 + lane % 16, 2 * ks + lane / 16));
  }

  const int64_t q_lo = p0 + t0, q_hi = p0 + min(t0 + kTile, n_tokens) - 1;
  const int64_t k_lo = window > 0 ? max(int64_t{0}, q_lo - window + 1) : 0;
  const int64_t row_pos[2] = {q_lo + warp * 16 + lane / 4, q_lo + warp * 16 + lane / 4 + 8};
  float o[D / 8][4] = {};
  float mx[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};
  // kAsync: key tile j0's copies into stage `st` (rows past q_hi zero-filled).
  auto issue_tile = [&](int st, int64_t j0) {
    if constexpr (kAsync) {
      T* tk = sk + st * 2 * kTile * D;
      for (int i = threadIdx.x; i < kTile * kChunks; i += kThreads) {
        const int r = i / kChunks, c = i % kChunks;
        const int64_t j = j0 + r;
        const bool in = j <= q_hi;
        const int64_t at = in ? j * kvw + g * D + 8 * c : 0;
        cp_async16(tk + off<D>(r, c), kc + at, in ? 16 : 0);
        cp_async16(tk + kTile * D + off<D>(r, c), vc + at, in ? 16 : 0);
      }
    }
    cp_async_commit();
  };
  const int64_t j_first = k_lo / kTile * kTile;
  if constexpr (kAsync) {
    __syncthreads();  // every warp has its Q fragments: stage 0 (where Q was staged) may be overwritten
    issue_tile(0, j_first);
  }
  int st = 0;
  for (int64_t j0 = j_first; j0 <= q_hi; j0 += kTile, st ^= kAsync ? 1 : 0) {
    __syncthreads();  // the previous tile (or the Q staging) is no longer read
    if constexpr (kAsync) {
      if (j0 + kTile <= q_hi) issue_tile(st ^ 1, j0 + kTile);
      else cp_async_commit();  // an empty group: the wait below still means tile j0
      cp_async_wait<1>();
    } else {
      for (int i = threadIdx.x; i < kTile * kChunks; i += kThreads) {
        const int r = i / kChunks, c = i % kChunks;
        const int64_t j = j0 + r;
        const bool in = j <= q_hi;
        store8(sk + off<D>(r, c), in, kc + (j * kvw + g * D + 8 * c), 1.0f);
        store8(sv + off<D>(r, c), in, vc + (j * kvw + g * D + 8 * c), 1.0f);
      }
    }
    __syncthreads();
    const T* tk = sk + st * 2 * kTile * D;
    const T* tv = tk + kTile * D;

    float s[kTile / 8][4] = {};
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      if constexpr (kQShared) ldmatrix_x4(qf[0], sq + off<D>(warp * 16 + lane % 16, 2 * ks + lane / 16));
      const uint32_t(&a)[4] = qf[kQShared ? 0 : ks];
#pragma unroll
      for (int np = 0; np < kTile / 16; ++np) {
        uint32_t r[4];
        ldmatrix_x4(r, tk + off<D>(np * 16 + lane % 8 + (lane / 16) * 8, 2 * ks + (lane / 8) % 2));
        mma16<T>(s[2 * np], a, r[0], r[1]);
        mma16<T>(s[2 * np + 1], a, r[2], r[3]);
      }
    }

#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int64_t p = row_pos[hh];
      float tile_max = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kTile / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t j = j0 + nt * 8 + 2 * (lane % 4) + e;
          const bool visible = j <= p && (window <= 0 || j > p - window);
          float& v = s[nt][2 * hh + e];
          v = visible ? v : -INFINITY;
          tile_max = fmaxf(tile_max, v);
        }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float m_new = fmaxf(mx[hh], tile_max);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet
      const float alpha = exp2f(mx[hh] - m_use);
      mx[hh] = m_new;
      float sum = 0;
#pragma unroll
      for (int nt = 0; nt < kTile / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& v = s[nt][2 * hh + e];
          v = exp2f(v - m_use);
          sum += v;
        }
      l[hh] = l[hh] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[dt][2 * hh] *= alpha;
        o[dt][2 * hh + 1] *= alpha;
      }
    }

#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      const uint32_t pa[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                              pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, tv + off<D>(kk * 16 + lane % 8 + ((lane / 8) % 2) * 8, 2 * dp + lane / 16));
        mma16<T>(o[2 * dp], pa, r[0], r[1]);
        mma16<T>(o[2 * dp + 1], pa, r[2], r[3]);
      }
    }
  }

#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float total = l[hh];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const int t = t0 + warp * 16 + lane / 4 + 8 * hh;
    if (t >= n_tokens) continue;
    const float inv = 1.0f / total;
    float* dst = out + (int64_t{t} * n_head + h) * D + 2 * (lane % 4);
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<float2*>(dst + dt * 8) = make_float2(o[dt][2 * hh] * inv, o[dt][2 * hh + 1] * inv);
  }
}

template <int D, typename Kv>
cudaError_t launch_prefill(dim3 grid, float* out, const float* q, Kv kc, Kv vc, int n_tokens, int n_head,
                           int n_head_kv, DevicePos pos, int window, float scale, cudaStream_t stream) {
  constexpr size_t smem = PrefillShape<D, Kv>::kSmem;
  constexpr auto kernel = flash_prefill_kernel<D, Kv>;
  if constexpr (smem > 48 * 1024) BW24_CUDA_TRY(allow_smem<kernel>(smem));
  return launch_pdl(kernel, grid, dim3(kThreads), smem, stream, out, q, kc, vc, n_tokens, n_head,
                    n_head_kv, pos, window, scale);
}

}  // namespace

bool flash_prefill_supports(int head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 256; }

cudaError_t flash_prefill(float* out, const float* q, const void* k_cache, const void* v_cache, KvTypes kv,
                          int n_tokens, int n_head, int n_head_kv, int head_dim, DevicePos pos, int window, float scale,
                          int n_ctx, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (n_head_kv <= 0 || n_head % n_head_kv != 0 || n_ctx <= 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((n_tokens + kTile - 1) / kTile), static_cast<unsigned>(n_head));
  auto go = [&](auto launcher, auto kc, auto vc) {
    return launcher(grid, out, q, kc, vc, n_tokens, n_head, n_head_kv, pos, window, scale, stream);
  };
  const int64_t kvw = int64_t{n_head_kv} * head_dim;
  const auto* kf = static_cast<const float*>(k_cache);
  const auto* vf = static_cast<const float*>(v_cache);
  const auto* kh = static_cast<const __half*>(k_cache);
  const auto* vh = static_cast<const __half*>(v_cache);
  const auto* kb = static_cast<const bf16*>(k_cache);
  const auto* vb = static_cast<const bf16*>(v_cache);
  const KvQ8 k8 = kv_q8(k_cache, n_ctx, kvw), v8 = kv_q8(v_cache, n_ctx, kvw);
  const KvQ4 k4 = kv_q4(k_cache, n_ctx, kvw), v4 = kv_q4(v_cache, n_ctx, kvw);
  const KvFp8 kp{static_cast<const uint8_t*>(k_cache), 0}, vp{static_cast<const uint8_t*>(v_cache), 0};
  if (kv.k != kv.v) {  // K and V of different types: the run-time typed loader
    const int64_t elems = int64_t{n_ctx} * kvw;
    const KvAny ka{static_cast<const uint8_t*>(k_cache), elems, kv.k, 0}, va{static_cast<const uint8_t*>(v_cache), elems, kv.v, 0};
    if (head_dim == 64) return go(launch_prefill<64, KvAny>, ka, va);
    if (head_dim == 128) return go(launch_prefill<128, KvAny>, ka, va);
    if (head_dim == 256) return go(launch_prefill<256, KvAny>, ka, va);
    return cudaErrorInvalidValue;
  }
  constexpr int kTypes = 8;  // KvDtype values, with room
  switch (head_dim * kTypes + static_cast<int>(kv.k)) {  // the dispatch table: head size x cache type
    case 64 * kTypes + 0: return go(launch_prefill<64, const float*>, kf, vf);
    case 64 * kTypes + 1: return go(launch_prefill<64, const __half*>, kh, vh);
    case 64 * kTypes + 2: return go(launch_prefill<64, KvQ8>, k8, v8);
    case 64 * kTypes + 3: return go(launch_prefill<64, const bf16*>, kb, vb);
    case 64 * kTypes + 4: return go(launch_prefill<64, KvQ4>, k4, v4);
    case 64 * kTypes + 5: return go(launch_prefill<64, KvFp8>, kp, vp);
    case 128 * kTypes + 0: return go(launch_prefill<128, const float*>, kf, vf);
    case 128 * kTypes + 1: return go(launch_prefill<128, const __half*>, kh, vh);
    case 128 * kTypes + 2: return go(launch_prefill<128, KvQ8>, k8, v8);
    case 128 * kTypes + 3: return go(launch_prefill<128, const bf16*>, kb, vb);
    case 128 * kTypes + 4: return go(launch_prefill<128, KvQ4>, k4, v4);
    case 128 * kTypes + 5: return go(launch_prefill<128, KvFp8>, kp, vp);
    case 256 * kTypes + 0: return go(launch_prefill<256, const float*>, kf, vf);
    case 256 * kTypes + 1: return go(launch_prefill<256, const __half*>, kh, vh);
    case 256 * kTypes + 2: return go(launch_prefill<256, KvQ8>, k8, v8);
    case 256 * kTypes + 3: return go(launch_prefill<256, const bf16*>, kb, vb);
    case 256 * kTypes + 4: return go(launch_prefill<256, KvQ4>, k4, v4);
    case 256 * kTypes + 5: return go(launch_prefill<256, KvFp8>, kp, vp);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace bw24::cuda
