// qwen35 (Qwen3.5 dense, e.g. Qwen3.5-9B/27B): a hybrid. Per layer_types (or every
// full_attention_interval-th layer) a gated full-attention layer — q/k norm, partial NeoX RoPE
// (the interleaved M-RoPE of the checkpoints reduces to it for text), sigmoid output gate — else a
// gated delta net (graph.h DeltaNetBlock). Every norm is zero-centered, (1 + w), except the gated
// norm inside the delta net (formats.md §3).
//
// From Hugging Face directories only for now: GGUF files fold the +1 into the norms, store
// ssm_a = -exp(A_log) and reorder the value heads (formats.md §1.5), which needs a real file to
// verify; such files are refused by name rather than run wrong.
#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/status.h"

namespace bw24::arch {

absl::StatusOr<ModelGraph> build_qwen35(const loaders::TensorDirectory& dir) {
  if (dir.origin != loaders::Origin::kHuggingFace)
    return error(Code::kUnsupported, "qwen35 from GGUF is not supported yet (value-head order and folded norms "
                 "unverified); open the Hugging Face directory");
  MetaReader meta(dir, "qwen35");
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 10000000.0f));
  BW24_ASSIGN_OR_RETURN(int32_t interval, meta.u32_or("full_attention_interval", 4));
  if (interval <= 0) return error(Code::kModel, "full_attention_interval {} must be positive", interval);
  const loaders::MetaValue* types = dir.meta("qwen35.attention.layer_types");
  if (types && (types->elem_type != loaders::MetaType::STRING || types->count != static_cast<uint64_t>(hp.n_layer)))
    return error(Code::kModel, "layer_types has {} entries for {} layers", types->count, hp.n_layer);
  ModelGraph g;
  g.arch = "qwen35";
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, /*norm_one_plus=*/true, &g));
  blocks::AttentionOptions attn;
  attn.rope_style = RopeStyle::kNeox;
  attn.qk_norm = true;
  attn.norm_one_plus = true;
  attn.gated = true;
  blocks::MlpOptions mlp;
  mlp.norm_one_plus = true;
  mlp.norm_name = "post_attention_norm.weight";
  for (int il = 0; il < hp.n_layer; ++il) {
    Layer layer;
    const std::string kind = types ? types->strings[static_cast<size_t>(il)]
                                   : ((il + 1) % interval == 0 ? "full_attention" : "linear_attention");
    if (kind == "linear_attention") {
      layer.recurrent = true;
      BW24_ASSIGN_OR_RETURN(layer.delta_net, blocks::delta_net(meta, il, hp, /*norm_one_plus=*/true));
    } else if (kind == "full_attention") {
      BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    } else {
      return error(Code::kModel, "layer {} has unknown type '{}'", il, kind);
    }
    BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, mlp));
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace bw24::arch
