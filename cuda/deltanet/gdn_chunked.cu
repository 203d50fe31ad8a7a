// Gated delta net prefill: the chunked form of the recurrence (cuda/deltanet/gdn.cuh gdn_chunked;
// the math and the CPU version: lib/ref/delta_rule.h gated_delta_chunked).
//
// Why: the token-by-token kernel (gdn_step) runs one CTA per value head through the tokens in
// order, a few barriers and shuffles per token: ~2 us per token whatever the GPU, so a 512-token
// pass costs ~1 ms per layer, most of a Qwen3.5-9B prefill (24 delta-net layers). In chunks of 64
// tokens the sequential part shrinks to 8 chunk steps and one 64-row forward substitution per
// chunk; the rest are small dense products done by the whole CTA.
//
// Work split: the columns of S (one per value channel j) evolve independently (delta_i[j] only
// reads column j of S and of the earlier deltas), so a CTA takes one value head and kCols = 32 of
// its dv columns: Hv x dv / 32 CTAs (128 for Qwen3.5-9B: one wave on 132 SMs). Each CTA recomputes
// the chunk's token-token matrices (k_i . k_p, q_i . k_p), which every column block shares.
//
// Per chunk of m <= 64 tokens, in shared memory (G: the running sum of the log decays g):
//   L[i][p] = beta_i e^(G_i - G_p) (k_i . k_p) for p < i,  W[i][p] = e^(G_i - G_p) (q_i . k_p) for p <= i
//   B[i][j] = beta_i (v_i[j] - e^(G_i) (S0^T k_i)[j]),   delta = (I + L)^-1 B  (warp 0, lane = column)
//   o_i[j] = e^(G_i) (S0^T q_i)[j] + sum_{p <= i} W[i][p] delta_p[j]
//   S[a][j] = e^(G_m) S0[a][j] + sum_p e^(G_m - G_p) k_p[a] delta_p[j]
// Napkin math per CTA and chunk (dk = 128): 2 x 64 x 64 x 128 / 2 MACs for L and W, 2 x 64 x 32 x
// 128 for S0^T k and S0^T q, 128 x 32 x 64 for S: ~1.6 M MACs, ~6 k per thread at 256 threads;
// the substitution is 2 k dependent-free MACs per lane. A 512-token pass: ~8 x 10 us per layer.
//
// The output is the head's raw o; gdn_gated_norm then applies the gated RMSNorm over the whole
// head (dv columns in 4 CTAs), in place.
#include <math.h>

#include <atomic>

#include "cuda/common/check.cuh"
#include "cuda/common/launch.cuh"
#include "cuda/deltanet/gdn.cuh"

namespace bw24::cuda {
namespace {

constexpr int kChunk = 64, kCols = 32, kThreads = 256, kMaxDk = 128;

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// Shared memory in floats for key width dk (rows of q and k padded to dk + 1: the token-token
// dots read 32 different rows at one column, which a stride of dk would put in one bank).
__host__ __device__ constexpr int smem_floats(int dk) {
  return dk * kCols                 // S slice [dk][kCols]
         + 2 * kChunk * (dk + 1)    // q, k [kChunk][dk + 1]
         + 2 * kChunk * kCols       // v -> B -> delta, S0^T q -> o  [kChunk][kCols]
         + 2 * kChunk * kChunk      // L, W [kChunk][kChunk]
         + 3 * kChunk;              // G, beta, e^(G_m - G_p)
}

__global__ void __launch_bounds__(kThreads) chunked_kernel(GdnStepArgs a, int n_tokens) {
  extern __shared__ float sm[];
  const int dk = a.dk, dkp = dk + 1;
  float* S = sm;                          // [dk][kCols]
  float* qs = S + dk * kCols;             // [kChunk][dkp]
  float* ks = qs + kChunk * dkp;          // [kChunk][dkp]
  float* dl = ks + kChunk * dkp;          // [kChunk][kCols]: v, then B, then delta
  float* os = dl + kChunk * kCols;        // [kChunk][kCols]: e^G S0^T q, then o
  float* L = os + kChunk * kCols;         // [kChunk][kChunk]
  float* W = L + kChunk * kChunk;         // [kChunk][kChunk]
  float* G = W + kChunk * kChunk;         // [kChunk]
  float* beta = G + kChunk;               // [kChunk]
  float* tail = beta + kChunk;            // [kChunk]: e^(G_{m-1} - G_p)

  const int col_blocks = (a.dv + kCols - 1) / kCols;
  const int hv = blockIdx.x / col_blocks, j0 = (blockIdx.x % col_blocks) * kCols;
  const int ncols = min(kCols, a.dv - j0);
  const int r = a.Hv / a.Hk, hk = a.v_heads_tiled ? hv % a.Hk : hv / r;
  const int g = hv / r, jr = hv % r;
  const int b_index = a.ba_fused ? g * 2 * r + jr : hv, a_index = a.ba_fused ? g * 2 * r + r + jr : hv;
  const int64_t C = 2 * int64_t{a.Hk} * dk + int64_t{a.Hv} * a.dv, Vd = int64_t{a.Hv} * a.dv;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  pdl_begin();
  // The state slice: global [Hv][dv][dk] (transposed per head) -> S[a][jj].
  float* sg = a.state + (int64_t{hv} * a.dv + j0) * dk;
  for (int idx = tid; idx < dk * kCols; idx += kThreads) {
    const int jj = idx / dk, i = idx % dk;  // consecutive threads: consecutive rows of one column (coalesced)
    S[i * kCols + jj] = jj < ncols ? sg[int64_t{jj} * dk + i] : 0.0f;
  }

  for (int c0 = 0; c0 < n_tokens; c0 += kChunk) {
    const int m = min(kChunk, n_tokens - c0);
    __syncthreads();  // the previous chunk's readers of q, k, delta, o are done; S is updated
    for (int idx = tid; idx < m * dk; idx += kThreads) {
      const int i = idx / dk, e = idx % dk;
      const float* yt = a.y + int64_t{c0 + i} * C;
      qs[i * dkp + e] = yt[int64_t{hk} * dk + e];
      ks[i * dkp + e] = yt[int64_t{a.Hk} * dk + int64_t{hk} * dk + e];
    }
    for (int idx = tid; idx < m * kCols; idx += kThreads) {
      const int i = idx / kCols, jj = idx % kCols;
      dl[idx] = jj < ncols ? a.y[int64_t{c0 + i} * C + 2 * int64_t{a.Hk} * dk + int64_t{hv} * a.dv + j0 + jj] : 0.0f;
    }
    if (tid < m) {
      const int64_t t = c0 + tid;
      beta[tid] = 1.0f / (1.0f + expf(-a.beta_raw[t * a.ba_stride + b_index]));
      const float ax = a.alpha_raw[t * a.ba_stride + a_index] + a.dt_bias[hv];
      G[tid] = a.neg_a[hv] * (ax > 20.0f ? ax : log1pf(expf(ax)));  // g; summed below
    }
    __syncthreads();
    if (warp == 0) {  // G = inclusive prefix sum of g over the chunk (two tokens per lane)
      float x0 = lane < m ? G[lane] : 0.0f, x1 = lane + 32 < m ? G[lane + 32] : 0.0f;
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const float u0 = __shfl_up_sync(0xffffffffu, x0, o), u1 = __shfl_up_sync(0xffffffffu, x1, o);
        if (lane >= o) x0 += u0, x1 += u1;
      }
      x1 += __shfl_sync(0xffffffffu, x0, 31);
      if (lane < m) G[lane] = x0;
      if (lane + 32 < m) G[lane + 32] = x1;
    }
    __syncthreads();
    // L, W (zero outside their triangles and past m); e^(G_{m-1} - G_p).
    for (int idx = tid; idx < kChunk * kChunk; idx += kThreads) {
      const int i = idx / kChunk, p = idx % kChunk;
      float l = 0, w = 0;
      if (i < m && p <= i) {
        float kk = 0, qk = 0;
        for (int e = 0; e < dk; ++e) {
          const float kp = ks[p * dkp + e];
          kk += ks[i * dkp + e] * kp;
          qk += qs[i * dkp + e] * kp;
        }
        const float decay = expf(G[i] - G[p]);
        w = decay * qk;
        if (p < i) l = beta[i] * decay * kk;
      }
      L[idx] = l;
      W[idx] = w;
    }
    if (tid < m) tail[tid] = expf(G[m - 1] - G[tid]);
    // B = beta (v - e^G S0^T k) into dl; e^G S0^T q into os.
    for (int idx = tid; idx < m * kCols; idx += kThreads) {
      const int i = idx / kCols, jj = idx % kCols;
      float sk = 0, sq = 0;
      for (int e = 0; e < dk; ++e) {
        const float s = S[e * kCols + jj];
        sk += s * ks[i * dkp + e];
        sq += s * qs[i * dkp + e];
      }
      const float eg = expf(G[i]);
      dl[idx] = beta[i] * (dl[idx] - eg * sk);
      os[idx] = eg * sq;
    }
    __syncthreads();
    // Forward substitution (I + L) delta = B, one column per lane of warp 0, rows in order.
    if (warp == 0)
      for (int i = 1; i < m; ++i) {
        float d = dl[i * kCols + lane];
        for (int p = 0; p < i; ++p) d -= L[i * kChunk + p] * dl[p * kCols + lane];
        dl[i * kCols + lane] = d;
      }
    __syncthreads();
    // o = os + W delta (raw: the gated norm follows in gdn_gated_norm), and the state update.
    for (int idx = tid; idx < m * kCols; idx += kThreads) {
      const int i = idx / kCols, jj = idx % kCols;
      float o = os[idx];
      for (int p = 0; p <= i; ++p) o += W[i * kChunk + p] * dl[p * kCols + jj];
      if (jj < ncols) a.out[int64_t{c0 + i} * Vd + int64_t{hv} * a.dv + j0 + jj] = o;
    }
    const float em = expf(G[m - 1]);
    for (int idx = tid; idx < dk * kCols; idx += kThreads) {
      const int e = idx / kCols, jj = idx % kCols;
      float s = em * S[idx];
      for (int p = 0; p < m; ++p) s += tail[p] * ks[p * dkp + e] * dl[p * kCols + jj];
      S[idx] = s;
    }
  }
  __syncthreads();
  for (int idx = tid; idx < dk * kCols; idx += kThreads) {
    const int jj = idx / dk, i = idx % dk;
    if (jj < ncols) sg[int64_t{jj} * dk + i] = S[i * kCols + jj];
  }
}

// out[t][hv] = rmsnorm(o over the head's dv) * w * silu(z), in place: one warp per (token, head).
__global__ void gated_norm_kernel(float* out, const float* z, const float* w, int n_tokens, int Hv, int dv, float eps) {
  pdl_begin();
  const int64_t row = int64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32;  // t * Hv + hv
  if (row >= int64_t{n_tokens} * Hv) return;
  const int lane = threadIdx.x % 32;
  float* o = out + row * dv;
  const float* zr = z + row * dv;
  float ss = 0;
  for (int j = lane; j < dv; j += 32) ss += o[j] * o[j];
  ss = warp_sum(ss);
  const float inv = rsqrtf(ss / dv + eps);
  for (int j = lane; j < dv; j += 32) o[j] = o[j] * inv * w[j] * silu(zr[j]);
}

}  // namespace

bool gdn_chunked_fits(int dk) {
  static std::atomic<int> optin[64] = {};  // per device ordinal: the opt-in shared memory per block
  int dev = 0, bytes = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  if (dev < 64 && (bytes = optin[dev].load(std::memory_order_relaxed)) == 0) {
    if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) return false;
    optin[dev].store(bytes, std::memory_order_relaxed);
  }
  return dk >= 1 && dk <= kMaxDk && smem_floats(kMaxDk) * 4 <= bytes;
}

cudaError_t gdn_chunked(const GdnStepArgs& a, int n_tokens, cudaStream_t stream) {
  if (n_tokens <= 0) return cudaSuccess;
  if (a.Hk <= 0 || a.Hv % a.Hk != 0 || a.dk < 1 || a.dk > kMaxDk || a.dv < 1) return cudaErrorInvalidValue;
  const size_t smem = size_t(smem_floats(a.dk)) * 4;
  BW24_CUDA_TRY(allow_smem<chunked_kernel>(size_t(smem_floats(kMaxDk)) * 4));  // the largest dk's, once
  const unsigned ctas = static_cast<unsigned>(a.Hv * ((a.dv + kCols - 1) / kCols));
  BW24_CUDA_TRY(launch_pdl(chunked_kernel, dim3(ctas), dim3(kThreads), smem, stream, a, n_tokens));
  constexpr int kWarps = 8;
  const int64_t rows = int64_t{n_tokens} * a.Hv;
  return launch_pdl(gated_norm_kernel, dim3(static_cast<unsigned>((rows + kWarps - 1) / kWarps)), dim3(32 * kWarps), 0,
                    stream, a.out, a.z, a.norm_w, n_tokens, a.Hv, a.dv, a.eps);
}

}  // namespace bw24::cuda
