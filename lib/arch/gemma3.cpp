// gemma3 (text): embeddings scaled by sqrt(n_embd); every block norms its input and its output
// (attn_norm / post_attention_norm, ffn_norm / post_ffw_norm); per-head Q/K RMSNorm; GeGLU (tanh
// GELU) MLP; NeoX RoPE; sliding-window attention on 5 of every 6 layers (local RoPE base 10000,
// global layers use rope.freq_base); tied embeddings.
// Norm weights: GGUF files have the +1 folded in (llama.cpp's converter); Hugging Face
// checkpoints store w and compute x_hat * (1 + w).
#include <cmath>

#include "lib/arch/blocks/blocks.h"
#include "lib/arch/registry.h"
#include "lib/core/status.h"

namespace bw24::arch {

absl::StatusOr<ModelGraph> build_gemma3(const loaders::TensorDirectory& dir) {
  MetaReader meta(dir, "gemma3");
  BW24_ASSIGN_OR_RETURN(blocks::Hparams hp, blocks::read_hparams(meta, 1000000.0f));
  BW24_ASSIGN_OR_RETURN(int32_t window, meta.u32("attention.sliding_window"));
  BW24_ASSIGN_OR_RETURN(float local_theta, meta.f32_or("rope.local.freq_base", 10000.0f));
  // 1/sqrt(query_pre_attn_scalar); checkpoints set it to head_dim except Gemma 3 27B.
  BW24_ASSIGN_OR_RETURN(float qpas, meta.f32_or("attention.query_pre_attn_scalar", static_cast<float>(hp.head_dim)));
  if (!(qpas > 0)) return error(Code::kModel, "query_pre_attn_scalar {} must be positive", qpas);
  // Which layers slide: an explicit per-layer list (from config.json layer_types) or the 5:1 pattern.
  std::vector<bool> sliding(static_cast<size_t>(hp.n_layer));
  const loaders::MetaValue* types = dir.meta("gemma3.attention.layer_types");
  for (int il = 0; il < hp.n_layer; ++il) {
    if (types && types->type == loaders::MetaType::ARRAY && types->elem_type == loaders::MetaType::STRING) {
      if (types->count != static_cast<uint64_t>(hp.n_layer))
        return error(Code::kModel, "layer_types has {} entries for {} layers", types->count, hp.n_layer);
      sliding[static_cast<size_t>(il)] = types->strings[static_cast<size_t>(il)] == "sliding_attention";
    } else {
      sliding[static_cast<size_t>(il)] = (il + 1) % 6 != 0;
    }
  }
  const bool one_plus = dir.origin == loaders::Origin::kHuggingFace;
  ModelGraph g;
  g.arch = "gemma3";
  BW24_RETURN_IF_ERROR(blocks::embeddings_and_head(dir, hp, one_plus, &g));
  g.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  for (int il = 0; il < hp.n_layer; ++il) {
    blocks::AttentionOptions attn;
    attn.rope_style = RopeStyle::kNeox;
    attn.qk_norm = true;
    attn.norm_one_plus = one_plus;
    attn.post_norm = true;
    attn.scale = 1.0f / std::sqrt(qpas);
    if (sliding[static_cast<size_t>(il)]) {
      attn.sliding_window = window;
      attn.rope_theta = local_theta;
    }
    blocks::MlpOptions mlp;
    mlp.act = Activation::kGeluTanh;
    mlp.norm_one_plus = one_plus;
    mlp.post_norm = true;
    Layer layer;
    BW24_ASSIGN_OR_RETURN(layer.attn, blocks::attention(dir, il, hp, attn));
    BW24_ASSIGN_OR_RETURN(layer.mlp, blocks::gated_mlp(dir, il, hp, mlp));
    g.layers.push_back(std::move(layer));
  }
  return g;
}

}  // namespace bw24::arch
