// qwen3 (dense): llama plus per-head RMSNorm on Q and K before RoPE, NeoX (half-split) RoPE,
// an explicit head_dim (H * head_dim may differ from n_embd) and, for small sizes, tied
// embeddings (formats.md §4).
#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/status.h"

namespace bw24::arch {

absl::StatusOr<ModelGraph> build_qwen3(const loaders::TensorDirectory& dir) {
  MetaReader meta(dir, "qwen3");
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 1000000.0f));
  ModelGraph g;
  g.arch = "qwen3";
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, /*norm_one_plus=*/false, &g));
  blocks::AttentionOptions attn;
  attn.rope_style = RopeStyle::kNeox;
  attn.qk_norm = true;
  for (int il = 0; il < hp.n_layer; ++il) {
    Layer layer;
    BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, {}));
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace bw24::arch
