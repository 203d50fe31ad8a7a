// qwen3 (dense): llama plus per-head RMSNorm on Q and K before RoPE, NeoX (half-split) RoPE,
// an explicit head_dim (H * head_dim may differ from n_embd) and, for small sizes, tied
// embeddings (formats.md §4). qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B): the same attention and a
// mixture of experts in every layer: softmax router, top-k experts renormalized, no shared expert
// (formats.md §1.3). Decoder-sparse steps and dense-only layers are refused by the HF loader (no
// public checkpoint uses them).
#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/status.h"

namespace bw24::arch {
namespace {

absl::StatusOr<ModelGraph> build_qwen3_family(const loaders::TensorDirectory& dir, const std::string& arch, bool moe) {
  MetaReader meta(dir, arch);
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 1000000.0f));
  ModelGraph g;
  g.arch = arch;
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, /*norm_one_plus=*/false, &g));
  blocks::AttentionOptions attn;
  attn.rope_style = RopeStyle::kNeox;
  attn.qk_norm = true;
  for (int il = 0; il < hp.n_layer; ++il) {
    Layer layer;
    BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    if (moe) {
      BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::moe_mlp(meta, il, hp));
    } else {
      BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, {}));
    }
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace

absl::StatusOr<ModelGraph> build_qwen3(const loaders::TensorDirectory& dir) {
  return build_qwen3_family(dir, "qwen3", false);
}
absl::StatusOr<ModelGraph> build_qwen3moe(const loaders::TensorDirectory& dir) {
  return build_qwen3_family(dir, "qwen3moe", true);
}

}  // namespace bw24::arch
