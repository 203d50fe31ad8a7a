#include "lib/arch/blocks/blocks.h"

#include <cmath>

#include <vector>
#include "lib/core/status.h"
#include "lib/quant/traits.h"

namespace bw24::arch::blocks {

using loaders::TensorDirectory;
using loaders::TensorInfo;

namespace {
std::string blk(int layer, const char* name) { return fmt::format("blk.{}.{}", layer, name); }
}  // namespace

absl::StatusOr<Weight> optional_weight(const TensorDirectory& dir, const std::string& name,
                                       std::initializer_list<int64_t> ne) {
  const TensorInfo* t = dir.tensor(name);
  if (!t) {
    if (const std::string* why = dir.refusal(name)) return make_status(Code::kUnsupported, *why);
    return Weight{};
  }
  bool ok = true;
  size_t k = 0;
  for (int64_t want : ne) ok &= (t->ne[k++] == want);
  for (; k < 4; ++k) ok &= (t->ne[k] == 1);
  if (!ok)
    return error(Code::kModel, "tensor '{}' has shape {}, expected [{}]", name, t->shape_string(),
                 fmt::join(std::vector<int64_t>(ne), ", "));
  if (!quant::traits(t->type))
    return error(Code::kUnsupported, "tensor '{}' has type {} which bw24 cannot read yet", name,
                 type_name(t->type));
  return Weight{t};
}

absl::StatusOr<Weight> weight(const TensorDirectory& dir, const std::string& name,
                              std::initializer_list<int64_t> ne) {
  BW24_ASSIGN_OR_RETURN(Weight w, optional_weight(dir, name, ne));
  if (!w) return error(Code::kModel, "missing tensor '{}'", name);
  return w;
}

absl::StatusOr<Hparams> read_hparams(const MetaReader& meta, float default_theta) {
  Hparams hp;
  BW24_ASSIGN_OR_RETURN(hp.n_embd, meta.u32("embedding_length"));
  BW24_ASSIGN_OR_RETURN(hp.n_layer, meta.u32("block_count"));
  BW24_ASSIGN_OR_RETURN(hp.n_head, meta.u32("attention.head_count"));
  BW24_ASSIGN_OR_RETURN(hp.n_head_kv, meta.u32_or("attention.head_count_kv", hp.n_head));
  BW24_ASSIGN_OR_RETURN(hp.n_ff, meta.u32("feed_forward_length"));
  BW24_ASSIGN_OR_RETURN(hp.n_ctx_train, meta.u32_or("context_length", 2048));
  BW24_ASSIGN_OR_RETURN(hp.norm_eps, meta.f32_or("attention.layer_norm_rms_epsilon", 1e-5f));
  BW24_ASSIGN_OR_RETURN(hp.rope_theta, meta.f32_or("rope.freq_base", default_theta));
  if (hp.n_embd <= 0 || hp.n_layer <= 0 || hp.n_head <= 0 || hp.n_head_kv <= 0 || hp.n_ff <= 0)
    return error(Code::kModel, "hyper-parameters must be positive (n_embd {}, n_layer {}, n_head {}, "
                 "n_head_kv {}, n_ff {})", hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.n_ff);
  if (hp.n_layer > 4096 || hp.n_head > 4096)
    return error(Code::kModel, "implausible hyper-parameters: {} layers, {} heads", hp.n_layer, hp.n_head);
  if (hp.n_head % hp.n_head_kv != 0)
    return error(Code::kModel, "head_count {} is not a multiple of head_count_kv {}", hp.n_head,
                 hp.n_head_kv);
  int32_t default_head_dim = hp.n_embd / hp.n_head;
  BW24_ASSIGN_OR_RETURN(hp.head_dim, meta.u32_or("attention.key_length", default_head_dim));
  BW24_ASSIGN_OR_RETURN(int32_t v_dim, meta.u32_or("attention.value_length", hp.head_dim));
  if (v_dim != hp.head_dim)
    return error(Code::kUnsupported, "key_length {} != value_length {} is not supported", hp.head_dim, v_dim);
  if (hp.head_dim <= 0 || hp.head_dim % 2 != 0 || hp.head_dim > 1024)
    return error(Code::kModel, "head dimension {} is not a positive even number <= 1024", hp.head_dim);
  BW24_ASSIGN_OR_RETURN(hp.rope_dims, meta.u32_or("rope.dimension_count", hp.head_dim));
  if (hp.rope_dims > hp.head_dim || hp.rope_dims % 2 != 0)
    return error(Code::kModel, "rope.dimension_count {} does not fit head dimension {}", hp.rope_dims,
                 hp.head_dim);
  if (!(hp.norm_eps > 0) || !(hp.rope_theta > 0))
    return error(Code::kModel, "rms epsilon {} and rope base {} must be positive", hp.norm_eps, hp.rope_theta);
  std::string scaling = meta.str_or(meta.dir().meta("general.architecture")->s + ".rope.scaling.type", "");
  if (!scaling.empty() && scaling != "none")
    return error(Code::kUnsupported, "RoPE scaling '{}' is not supported yet", scaling);
  const TensorInfo* emb = meta.dir().tensor("token_embd.weight");
  if (!emb) {
    if (const std::string* why = meta.dir().refusal("token_embd.weight"))
      return make_status(Code::kUnsupported, *why);
    return error(Code::kModel, "missing tensor 'token_embd.weight'");
  }
  if (emb->ne[1] <= 0 || emb->ne[1] > (1 << 24))
    return error(Code::kModel, "token_embd.weight has {} rows", emb->ne[1]);
  hp.n_vocab = static_cast<int32_t>(emb->ne[1]);
  return hp;
}

absl::StatusOr<AttentionBlock> attention(const TensorDirectory& dir, int layer, const Hparams& hp,
                                         const AttentionOptions& opt) {
  AttentionBlock a;
  a.n_head = hp.n_head;
  a.n_head_kv = hp.n_head_kv;
  a.head_dim = hp.head_dim;
  a.rope_dims = hp.rope_dims;
  a.rope_style = opt.rope_style;
  a.rope_theta = hp.rope_theta;
  a.sliding_window = opt.sliding_window;
  if (opt.rope_theta > 0) a.rope_theta = opt.rope_theta;
  a.scale = opt.scale > 0 ? opt.scale : 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  const int64_t q_out = int64_t{hp.n_head} * hp.head_dim, kv_out = int64_t{hp.n_head_kv} * hp.head_dim;
  BW24_ASSIGN_OR_RETURN(a.norm.w, weight(dir, blk(layer, "attn_norm.weight"), {hp.n_embd}));
  a.norm.one_plus = opt.norm_one_plus;
  a.gated = opt.gated;
  BW24_ASSIGN_OR_RETURN(a.wq, weight(dir, blk(layer, "attn_q.weight"), {hp.n_embd, opt.gated ? 2 * q_out : q_out}));
  BW24_ASSIGN_OR_RETURN(a.wk, weight(dir, blk(layer, "attn_k.weight"), {hp.n_embd, kv_out}));
  BW24_ASSIGN_OR_RETURN(a.wv, weight(dir, blk(layer, "attn_v.weight"), {hp.n_embd, kv_out}));
  BW24_ASSIGN_OR_RETURN(a.wo, weight(dir, blk(layer, "attn_output.weight"), {q_out, hp.n_embd}));
  if (opt.qk_norm) {
    BW24_ASSIGN_OR_RETURN(a.q_norm.w, weight(dir, blk(layer, "attn_q_norm.weight"), {hp.head_dim}));
    BW24_ASSIGN_OR_RETURN(a.k_norm.w, weight(dir, blk(layer, "attn_k_norm.weight"), {hp.head_dim}));
    a.q_norm.one_plus = a.k_norm.one_plus = opt.norm_one_plus;
  }
  if (opt.post_norm) {
    BW24_ASSIGN_OR_RETURN(a.post_norm.w, weight(dir, blk(layer, "post_attention_norm.weight"), {hp.n_embd}));
    a.post_norm.one_plus = opt.norm_one_plus;
  }
  return a;
}

absl::StatusOr<MlpBlock> gated_mlp(const TensorDirectory& dir, int layer, const Hparams& hp,
                                   const MlpOptions& opt) {
  MlpBlock m;
  m.act = opt.act;
  BW24_ASSIGN_OR_RETURN(m.norm.w, weight(dir, blk(layer, opt.norm_name), {hp.n_embd}));
  m.norm.one_plus = opt.norm_one_plus;
  BW24_ASSIGN_OR_RETURN(m.gate, weight(dir, blk(layer, "ffn_gate.weight"), {hp.n_embd, hp.n_ff}));
  BW24_ASSIGN_OR_RETURN(m.up, weight(dir, blk(layer, "ffn_up.weight"), {hp.n_embd, hp.n_ff}));
  BW24_ASSIGN_OR_RETURN(m.down, weight(dir, blk(layer, "ffn_down.weight"), {hp.n_ff, hp.n_embd}));
  if (opt.post_norm) {
    BW24_ASSIGN_OR_RETURN(m.post_norm.w, weight(dir, blk(layer, "post_ffw_norm.weight"), {hp.n_embd}));
    m.post_norm.one_plus = opt.norm_one_plus;
  }
  return m;
}

absl::StatusOr<DeltaNetBlock> delta_net(const MetaReader& meta, int layer, const Hparams& hp, bool norm_one_plus,
                                        bool gguf_tiled_v) {
  const TensorDirectory& dir = meta.dir();
  DeltaNetBlock b;
  BW24_ASSIGN_OR_RETURN(b.conv_kernel, meta.u32("ssm.conv_kernel"));
  BW24_ASSIGN_OR_RETURN(b.d_k, meta.u32("ssm.state_size"));
  BW24_ASSIGN_OR_RETURN(b.n_k_heads, meta.u32("ssm.group_count"));
  BW24_ASSIGN_OR_RETURN(b.n_v_heads, meta.u32("ssm.time_step_rank"));
  BW24_ASSIGN_OR_RETURN(int32_t inner, meta.u32_or("ssm.inner_size", 0));
  BW24_ASSIGN_OR_RETURN(b.d_v, meta.u32_or("ssm.value_head_dim", b.n_v_heads > 0 && inner > 0 ? inner / b.n_v_heads : b.d_k));
  if (b.conv_kernel < 1 || b.conv_kernel > 64 || b.d_k <= 0 || b.d_k > 1024 || b.d_v <= 0 || b.d_v > 1024 ||
      b.n_k_heads <= 0 || b.n_v_heads <= 0 || b.n_v_heads % b.n_k_heads != 0)
    return error(Code::kModel, "gated delta net sizes out of range: conv kernel {}, {} key heads of {}, {} value heads of {}",
                 b.conv_kernel, b.n_k_heads, b.d_k, b.n_v_heads, b.d_v);
  const int64_t E = hp.n_embd, Vd = int64_t{b.n_v_heads} * b.d_v;
  BW24_ASSIGN_OR_RETURN(b.norm.w, weight(dir, blk(layer, "attn_norm.weight"), {E}));
  b.norm.one_plus = norm_one_plus;
  BW24_ASSIGN_OR_RETURN(b.in_qkv, weight(dir, blk(layer, "attn_qkv.weight"), {E, b.conv_dim()}));
  BW24_ASSIGN_OR_RETURN(b.in_z, weight(dir, blk(layer, "attn_gate.weight"), {E, Vd}));
  BW24_ASSIGN_OR_RETURN(b.in_ba, optional_weight(dir, blk(layer, "ssm_ba.weight"), {E, 2 * b.n_v_heads}));
  if (!b.in_ba) {
    BW24_ASSIGN_OR_RETURN(b.in_b, weight(dir, blk(layer, "ssm_beta.weight"), {E, b.n_v_heads}));
    BW24_ASSIGN_OR_RETURN(b.in_a, weight(dir, blk(layer, "ssm_alpha.weight"), {E, b.n_v_heads}));
  }
  BW24_ASSIGN_OR_RETURN(b.conv, weight(dir, blk(layer, "ssm_conv1d.weight"), {b.conv_kernel, b.conv_dim()}));
  BW24_ASSIGN_OR_RETURN(b.dt_bias, weight(dir, blk(layer, "ssm_dt.bias"), {b.n_v_heads}));
  // GGUF files carry llama.cpp's transforms: ssm_a = -exp(A_log) and value heads in tiled order.
  const bool gguf = dir.origin == loaders::Origin::kGguf;
  b.a_is_log = !gguf;
  b.v_heads_tiled = gguf && gguf_tiled_v;
  BW24_ASSIGN_OR_RETURN(b.a, weight(dir, blk(layer, b.a_is_log ? "ssm_a_log" : "ssm_a"), {b.n_v_heads}));
  BW24_ASSIGN_OR_RETURN(b.gated_norm, weight(dir, blk(layer, "ssm_norm.weight"), {b.d_v}));
  BW24_ASSIGN_OR_RETURN(b.out_proj, weight(dir, blk(layer, "ssm_out.weight"), {Vd, E}));
  return b;
}

absl::StatusOr<MlpBlock> moe_mlp(const MetaReader& meta, int layer, const Hparams& hp, const MoeOptions& opt) {
  const TensorDirectory& dir = meta.dir();
  MlpBlock m;
  MoeBlock& e = m.moe;
  BW24_ASSIGN_OR_RETURN(e.n_expert, meta.u32("expert_count"));
  BW24_ASSIGN_OR_RETURN(e.n_used, meta.u32("expert_used_count"));
  BW24_ASSIGN_OR_RETURN(int32_t n_ff_exp, meta.u32("expert_feed_forward_length"));
  if (e.n_expert <= 0 || e.n_expert > 4096 || e.n_used <= 0 || e.n_used > e.n_expert || n_ff_exp <= 0)
    return error(Code::kModel, "MoE hyper-parameters out of range: {} experts, {} used per token, expert FFN {}",
                 e.n_expert, e.n_used, n_ff_exp);
  // llama.cpp normalizes the selected weights for qwen3moe unless the file says otherwise.
  BW24_ASSIGN_OR_RETURN(e.norm_topk, meta.bool_or("expert_weights_norm", true));
  BW24_ASSIGN_OR_RETURN(int32_t gating, meta.u32_or("expert_gating_func", 1));
  if (gating != 1) return error(Code::kUnsupported, "expert gating function {} is not supported (softmax = 1)", gating);
  BW24_ASSIGN_OR_RETURN(m.norm.w, weight(dir, blk(layer, opt.norm_name), {hp.n_embd}));
  m.norm.one_plus = opt.norm_one_plus;
  if (opt.shared_expert) {
    BW24_ASSIGN_OR_RETURN(int32_t n_ff_sh, meta.u32("expert_shared_feed_forward_length"));
    if (n_ff_sh <= 0) return error(Code::kModel, "shared expert FFN length {} must be positive", n_ff_sh);
    BW24_ASSIGN_OR_RETURN(e.shared_gate_inp, weight(dir, blk(layer, "ffn_gate_inp_shexp.weight"), {hp.n_embd}));
    BW24_ASSIGN_OR_RETURN(e.shared_gate, weight(dir, blk(layer, "ffn_gate_shexp.weight"), {hp.n_embd, n_ff_sh}));
    BW24_ASSIGN_OR_RETURN(e.shared_up, weight(dir, blk(layer, "ffn_up_shexp.weight"), {hp.n_embd, n_ff_sh}));
    BW24_ASSIGN_OR_RETURN(e.shared_down, weight(dir, blk(layer, "ffn_down_shexp.weight"), {n_ff_sh, hp.n_embd}));
  }
  BW24_ASSIGN_OR_RETURN(e.router, weight(dir, blk(layer, "ffn_gate_inp.weight"), {hp.n_embd, e.n_expert}));
  BW24_ASSIGN_OR_RETURN(e.gate_exps, weight(dir, blk(layer, "ffn_gate_exps.weight"), {hp.n_embd, n_ff_exp, e.n_expert}));
  BW24_ASSIGN_OR_RETURN(e.up_exps, weight(dir, blk(layer, "ffn_up_exps.weight"), {hp.n_embd, n_ff_exp, e.n_expert}));
  BW24_ASSIGN_OR_RETURN(e.down_exps, weight(dir, blk(layer, "ffn_down_exps.weight"), {n_ff_exp, hp.n_embd, e.n_expert}));
  return m;
}

absl::Status embeddings_and_head(const TensorDirectory& dir, const Hparams& hp, bool norm_one_plus,
                                 ModelGraph* g) {
  g->n_vocab = hp.n_vocab;
  g->n_embd = hp.n_embd;
  g->n_ctx_train = hp.n_ctx_train;
  g->norm_eps = hp.norm_eps;
  BW24_ASSIGN_OR_RETURN(g->tok_embd, weight(dir, "token_embd.weight", {hp.n_embd, hp.n_vocab}));
  BW24_ASSIGN_OR_RETURN(g->output_norm.w, weight(dir, "output_norm.weight", {hp.n_embd}));
  g->output_norm.one_plus = norm_one_plus;
  BW24_ASSIGN_OR_RETURN(g->output, optional_weight(dir, "output.weight", {hp.n_embd, hp.n_vocab}));
  if (!g->output) {
    const loaders::MetaValue* tie = dir.meta("hf.tie_word_embeddings");
    if (tie && tie->u == 0)
      return error(Code::kModel, "config.json says tie_word_embeddings=false but there is no lm_head.weight");
    g->output = g->tok_embd;
    g->tied_embeddings = true;
  }
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    const loaders::MetaValue* v = dir.meta(key);
    if (!v) continue;
    auto id = v->as_int();
    // Converters write 0xFFFFFFFF for "none"; anything outside the vocabulary is ignored.
    if (id && *id >= 0 && *id < hp.n_vocab) {
      bool seen = false;
      for (int32_t e : g->eog_tokens) seen |= (e == *id);
      if (!seen) g->eog_tokens.push_back(static_cast<int32_t>(*id));
    }
  }
  return absl::OkStatus();
}

}  // namespace bw24::arch::blocks
