// llama: RMSNorm, GQA attention with RoPE, SwiGLU MLP.
// GGUF files from llama.cpp's converter store Q/K rows permuted for adjacent-pair RoPE
// (formats.md §1.5 item 9); Hugging Face checkpoints are not permuted and use half-split RoPE.
#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/status.h"

namespace bw24::arch {

absl::StatusOr<ModelGraph> build_llama(const loaders::TensorDirectory& dir) {
  MetaReader meta(dir, "llama");
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 10000.0f));
  ModelGraph g;
  g.arch = "llama";
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, /*norm_one_plus=*/false, &g));
  blocks::AttentionOptions attn;
  attn.rope_style = dir.origin == loaders::Origin::kGguf ? RopeStyle::kNorm : RopeStyle::kNeox;
  for (int il = 0; il < hp.n_layer; ++il) {
    Layer layer;
    BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, {}));
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace bw24::arch
