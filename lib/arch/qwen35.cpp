// qwen35 (Qwen3.5 dense, e.g. Qwen3.5-9B/27B) and qwen35moe (Qwen3.5/3.6-MoE, e.g.
// Qwen3.6-35B-A3B: the same stack with a mixture of experts plus a gated shared expert as MLP,
// top-k always renormalized) and qwen3next (Qwen3-Next-80B-A3B: MoE like qwen35moe, its GGUFs
// without the value-head reorder): hybrids. Per layer_types (or every
// full_attention_interval-th layer) a gated full-attention layer — q/k norm, partial NeoX RoPE
// (the interleaved M-RoPE of the checkpoints reduces to it for text), sigmoid output gate — else a
// gated delta net (graph.h DeltaNetBlock). Every norm is zero-centered, (1 + w), except the gated
// norm inside the delta net (formats.md §3).
//
// GGUF files carry llama.cpp's conversion transforms (formats.md §1.5): the +1 folded into the
// norms, ssm_a = -exp(A_log), value heads in tiled order. The golden's GGUF is written with them
// and llama.cpp reproduces transformers' logits on it (tests/reference/llamacpp_qwen35_check.py).
#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/log.h"
#include "lib/core/status.h"

namespace bw24::arch {

namespace {

absl::StatusOr<ModelGraph> build_hybrid(const loaders::TensorDirectory& dir, const std::string& arch, bool moe,
                                        bool gguf_tiled_v) {
  MetaReader meta(dir, arch);
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 10000000.0f));
  BW24_ASSIGN_OR_RETURN(int32_t interval, meta.u32_or("full_attention_interval", 4));
  if (interval <= 0) return error(Code::kModel, "full_attention_interval {} must be positive", interval);
  // GGUF block_count includes the multi-token-prediction blocks (nextn); they stay in the
  // directory for speculative decoding and are not part of the main stack.
  BW24_ASSIGN_OR_RETURN(int32_t n_mtp, meta.u32_or("nextn_predict_layers", 0));
  if (n_mtp < 0 || n_mtp >= hp.n_layer)
    return error(Code::kModel, "nextn_predict_layers {} leaves no main layers of {}", n_mtp, hp.n_layer);
  const int32_t n_main = hp.n_layer - n_mtp;
  if (n_mtp > 0) log(LogLevel::kInfo, "{}: {} MTP block(s) kept for speculative decoding, not run", arch, n_mtp);
  const loaders::MetaValue* types = dir.meta(arch + ".attention.layer_types");
  if (types && (types->elem_type != loaders::MetaType::STRING || types->count != static_cast<uint64_t>(n_main)))
    return error(Code::kModel, "layer_types has {} entries for {} layers", types->count, n_main);
  const bool one_plus = dir.origin == loaders::Origin::kHuggingFace;  // GGUF: +1 already folded in
  ModelGraph g;
  g.arch = arch;
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, one_plus, &g));
  blocks::AttentionOptions attn;
  attn.rope_style = RopeStyle::kNeox;
  attn.qk_norm = true;
  attn.norm_one_plus = one_plus;
  attn.gated = true;
  blocks::MlpOptions mlp;
  mlp.norm_one_plus = one_plus;
  mlp.norm_name = "post_attention_norm.weight";
  blocks::MoeOptions experts;
  experts.norm_one_plus = one_plus;
  experts.norm_name = "post_attention_norm.weight";
  experts.shared_expert = true;
  for (int il = 0; il < n_main; ++il) {
    Layer layer;
    const std::string kind = types ? types->strings[static_cast<size_t>(il)]
                                   : ((il + 1) % interval == 0 ? "full_attention" : "linear_attention");
    if (kind == "linear_attention") {
      layer.recurrent = true;
      BW24_ASSIGN_OR_RETURN(layer.delta_net, blocks::delta_net(meta, il, hp, one_plus, gguf_tiled_v));
    } else if (kind == "full_attention") {
      BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    } else {
      return error(Code::kModel, "layer {} has unknown type '{}'", il, kind);
    }
    if (moe) {
      BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::moe_mlp(meta, il, hp, experts));
    } else {
      BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, mlp));
    }
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace

absl::StatusOr<ModelGraph> build_qwen35(const loaders::TensorDirectory& dir) {
  return build_hybrid(dir, "qwen35", false, true);
}
absl::StatusOr<ModelGraph> build_qwen35moe(const loaders::TensorDirectory& dir) {
  return build_hybrid(dir, "qwen35moe", true, true);
}
// Qwen3-Next: the same stack; its GGUFs keep the value heads in HF order and b/a fused (ssm_ba).
absl::StatusOr<ModelGraph> build_qwen3next(const loaders::TensorDirectory& dir) {
  return build_hybrid(dir, "qwen3next", true, false);
}

}  // namespace bw24::arch
