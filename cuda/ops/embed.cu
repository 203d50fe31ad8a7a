// The embedding gather of cuda/ops/embed.cuh. This file is compiled with --fmad=false: the formats'
// arithmetic (cuda/common/weight_octets.cuh, d * q - m and the like) then rounds after every
// multiply and add as lib/quant's dequantizers do on the host (no FMA contraction there either), so
// a row gathered here is bit-equal to the host's embed_tokens and a step fed by the device gives
// the same logits as one fed by the host (bw24-kernel-check "embed_token").
#include "cuda/common/launch.cuh"
#include "cuda/common/weight_octets.cuh"
#include "cuda/ops/embed.cuh"

namespace bw24::cuda {
namespace {

using namespace octets;

constexpr int kThreads = 512;  // a 4096-wide row: one octet a thread

template <class F>
__global__ void __launch_bounds__(kThreads) embed_kernel(EmbedArgs a) {
  // The graph's first kernel: token and hold were written before the step's launch, so nothing
  // here waits on a predecessor inside the step; the wait orders it after the previous step's
  // kernels where the stream chains them.
  pdl_begin();
  int64_t tok = *a.token;
  if (tok < 0 || tok >= a.rows) tok = 0;
  const int64_t blocks = a.cols / F::kBlockElems;
  const auto* w = static_cast<const uint8_t*>(a.table);
  for (int64_t o = threadIdx.x; o < a.cols / 8; o += blockDim.x) {
    const int64_t c = 8 * o;
    float v[8];
    F::get8(w, a.rows * blocks, blocks, tok * blocks + c / F::kBlockElems, static_cast<int>(c % F::kBlockElems), v);
    if (a.scale != 1.0f)
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] *= a.scale;
    float4* dst = reinterpret_cast<float4*>(a.out + c);
    dst[0] = make_float4(v[0], v[1], v[2], v[3]);
    dst[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
  // A held step saves the logits of the step before it (one CTA: ~600 KB at a few hundred GB/s,
  // a few microseconds, paid once a generation, by the step the host discards).
  if (a.hold && *a.hold)
    for (int64_t i = threadIdx.x; i < a.n_logits; i += blockDim.x) a.logits_keep[i] = a.logits[i];
}

__global__ void set_step_kernel(int32_t* token_dev, int32_t token, int64_t* pos_dev, int64_t pos, int32_t* hold) {
  *token_dev = token;
  *pos_dev = pos;
  if (hold) *hold = 0;
}

template <class F>
cudaError_t launch(const EmbedArgs& a, cudaStream_t s) {
  if (a.cols % F::kBlockElems != 0) return cudaErrorInvalidValue;
  return launch_pdl(embed_kernel<F>, dim3(1), dim3(kThreads), 0, s, a);
}

}  // namespace

bool embed_supports(uint32_t t, int64_t cols) { return octets::supported(t) && cols > 0 && cols % 8 == 0; }

// The gather of one format: launch<F> through the formats' dispatch table (weight_octets.cuh).
cudaError_t embed_token(const EmbedArgs& a, cudaStream_t s) {
  if (!embed_supports(a.type, a.cols) || a.rows <= 0) return cudaErrorInvalidValue;
  return with_format(a.type, [&](auto f) { return launch<decltype(f)>(a, s); });
}

cudaError_t set_step(int32_t* token_dev, int32_t token, int64_t* pos_dev, int64_t pos, int32_t* hold,
                     cudaStream_t stream) {
  // A plain launch: it follows a graph launch or a copy, not a kernel of the PDL chain.
  set_step_kernel<<<1, 1, 0, stream>>>(token_dev, token, pos_dev, pos, hold);
  return cudaGetLastError();
}

}  // namespace bw24::cuda
