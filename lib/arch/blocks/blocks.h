// Shared building blocks for arch files: weight lookup with shape and type checks, the common
// hyper-parameters, and one builder per block kind. Arch files compose these.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "lib/arch/config.h"
#include "lib/arch/graph.h"

namespace bw24::arch::blocks {

// Look up a weight by GGUF name, check its ne-order shape and that bw24 can read its type.
absl::StatusOr<Weight> weight(const loaders::TensorDirectory& dir, const std::string& name,
                              std::initializer_list<int64_t> ne);
// Same, but a missing tensor gives an empty Weight.
absl::StatusOr<Weight> optional_weight(const loaders::TensorDirectory& dir, const std::string& name,
                                       std::initializer_list<int64_t> ne);

struct Hparams {
  int32_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  int32_t n_ff = 0, n_ctx_train = 0, rope_dims = 0;
  float norm_eps = 1e-5f, rope_theta = 10000.0f;
};
// Reads the hyper-parameters every transformer arch has, validating their relations.
absl::StatusOr<Hparams> read_hparams(const MetaReader& meta, float default_theta);

struct AttentionOptions {
  RopeStyle rope_style = RopeStyle::kNorm;
  bool qk_norm = false;
  bool norm_one_plus = false;
  bool post_norm = false;      // blk.N.post_attention_norm after the output projection
  bool gated = false;          // Qwen3.5: attn_q has [q | gate] rows per head (2 * H * D)
  int32_t sliding_window = 0;
  float rope_theta = 0;        // 0: the model's rope.freq_base
  float scale = 0;             // 0: 1/sqrt(head_dim)
};
absl::StatusOr<AttentionBlock> attention(const loaders::TensorDirectory& dir, int layer,
                                         const Hparams& hp, const AttentionOptions& opt);

struct MlpOptions {
  Activation act = Activation::kSilu;
  bool norm_one_plus = false;
  bool post_norm = false;  // blk.N.post_ffw_norm after the down projection
  const char* norm_name = "ffn_norm.weight";  // qwen35: post_attention_norm.weight
};
absl::StatusOr<MlpBlock> gated_mlp(const loaders::TensorDirectory& dir, int layer,
                                   const Hparams& hp, const MlpOptions& opt);

// The gated delta net of blk.N (Qwen3.5 linear attention) from the <arch>.ssm.* keys.
// gguf_tiled_v: GGUF files of this arch reorder value heads (qwen35*, not qwen3next).
absl::StatusOr<DeltaNetBlock> delta_net(const MetaReader& meta, int layer, const Hparams& hp, bool norm_one_plus,
                                        bool gguf_tiled_v);

// Router and stacked experts of blk.N (ffn_gate_inp, ffn_{gate,up,down}_exps) from the
// <arch>.expert_count / expert_used_count / expert_feed_forward_length / expert_weights_norm keys.
struct MoeOptions {
  bool norm_one_plus = false;
  const char* norm_name = "ffn_norm.weight";  // qwen35moe: post_attention_norm.weight
  bool shared_expert = false;                 // ffn_*_shexp + ffn_gate_inp_shexp (Qwen3.5-MoE)
};
absl::StatusOr<MlpBlock> moe_mlp(const MetaReader& meta, int layer, const Hparams& hp, const MoeOptions& opt = {});

// token_embd, output_norm, output (tied to token_embd when absent), end-of-generation ids.
absl::Status embeddings_and_head(const loaders::TensorDirectory& dir, const Hparams& hp,
                                 bool norm_one_plus, ModelGraph* g);

}  // namespace bw24::arch::blocks
