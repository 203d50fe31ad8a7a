// Token selection on the device, so the decode loop reads back a token id (4 bytes) instead of
// the logits row (n_vocab x 4 bytes: 600 KB for Qwen3, plus the host's pass over it).
// bw24-kernel-check compares argmax with sampling::argmax and sample_top_k with sampling::Sampler.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

// What a decode step's token choice also writes for the step queued behind it (run-ahead decoding,
// lib/engine/cuda_runner.cpp queue_step): that step's position, and whether the choice is one of
// the stop tokens (*hold = 1: the step behind, fed a token the host will not keep, leaves the
// recurrent state as it is and saves these logits; cuda/ops/embed.cuh). Written by the thread that
// writes the choice, in the same kernel, so the step behind needs no launch of its own for them.
constexpr int kStepMaxStops = 16;
struct StepNext {
  int64_t* pos = nullptr;  // null: nothing is written
  int64_t pos_value = 0;
  int32_t* hold = nullptr;
  int32_t n_stops = 0;
  int32_t stops[kStepMaxStops] = {};
  // Pinned host memory (cudaMallocHost: mapped, one address space) the choice is also stored
  // to, so that no copy needs to follow the kernel on the stream before the next step; the host
  // reads it after an event recorded behind the kernel. Null: none.
  int32_t* host_choice = nullptr;
};

// *out = the index of the largest of x[0, n), the lowest such index on ties (as
// sampling::argmax). One CTA: n = 152K floats is 600 KB, a few microseconds from L2.
cudaError_t argmax(int32_t* out, const float* x, int32_t n, cudaStream_t stream, const StepNext& next = {});

// Sampling with top-k (1 <= top_k <= kSampleMaxTopK), temperature > 0, top-p and min-p, as
// sampling::Sampler::sample computes it without penalties, given the uniform draw u in [0, 1) that
// the host sampler would take (Sampler::draw): *out = the token. One CTA; cuda/sampling/sample.cu.
constexpr int kSampleMaxTopK = 1024;
struct SampleParams {
  float temperature;
  int32_t top_k;
  float top_p, min_p;
};
cudaError_t sample_top_k(int32_t* out, const float* logits, int32_t n, const SampleParams& p, double u,
                         cudaStream_t stream, const StepNext& next = {});

}  // namespace bw24::cuda
