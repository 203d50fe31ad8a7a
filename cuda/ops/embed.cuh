// A decode step's first kernel where the token is chosen on the device: the embedding row of that
// token, gathered and dequantized on the device (cuda/ops/embed.cu), so the host need not read the
// token back before the step can start (run-ahead decoding, lib/engine/cuda_runner.cpp).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace bw24::cuda {

struct EmbedArgs {
  float* out;             // [cols]
  const void* table;      // [rows][cols] as the device holds it (cuda/common/weight_octets.cuh)
  uint32_t type;          // ggml type id
  int64_t rows, cols;
  float scale;            // the model's embedding scale (1: none), applied as lib/engine's embed_tokens
  const int32_t* token;   // on the device: the previous step's choice, or set_step's token
  // A held step (*hold nonzero, cuda::StepNext) first saves the logits its predecessor left:
  // logits [n_logits] -> logits_keep, since its own LM head overwrites them. Null: no hold.
  const int32_t* hold;
  const float* logits;
  float* logits_keep;
  int64_t n_logits;
};

// Whether embed_token takes the table: its type (the formats of cuda/common/weight_octets.cuh) and
// cols % 8 == 0 (8 floats a thread).
bool embed_supports(uint32_t type, int64_t cols);
// out = the row of *token (a token outside [0, rows) reads row 0), bit-equal to lib/ref's
// dequant_row times scale. One CTA: a 4096-wide Q4_K row is 2.3 KB in, 16 KB out.
cudaError_t embed_token(const EmbedArgs& args, cudaStream_t stream);

// A step whose token comes from the host: *token = token, *pos = pos, *hold = 0 (hold may be null).
// A kernel rather than copies from pinned memory, so a queued step's values are fixed at launch.
cudaError_t set_step(int32_t* token_dev, int32_t token, int64_t* pos_dev, int64_t pos, int32_t* hold,
                     cudaStream_t stream);

}  // namespace bw24::cuda
