#include "loaders/safetensors/hf_model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "lib/core/dtype.h"
#include "lib/core/log.h"
#include "lib/core/status.h"
#include "loaders/safetensors/hf_tokenizer.h"
#include "loaders/safetensors/safetensors.h"
#include "nlohmann/json.hpp"

namespace bw24::loaders {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// HF per-layer suffix -> GGUF per-block suffix (formats.md §1.4).
constexpr std::pair<std::string_view, std::string_view> kLayerNames[] = {
    {"input_layernorm", "attn_norm"},
    {"post_attention_layernorm", "ffn_norm"},
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"mlp.gate", "ffn_gate_inp"},  // MoE router
    {"mlp.shared_expert.gate_proj", "ffn_gate_shexp"},
    {"mlp.shared_expert.up_proj", "ffn_up_shexp"},
    {"mlp.shared_expert.down_proj", "ffn_down_shexp"},
    {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
};

// Qwen3.5 (qwen35): the post-attention norm's GGUF name, and the gated delta net's tensors. A_log
// keeps its HF meaning under ssm_a_log (GGUF files store ssm_a = -exp(A_log) instead).
constexpr std::pair<std::string_view, std::string_view> kQwen35LayerNames[] = {
    {"post_attention_layernorm.weight", "post_attention_norm.weight"},
    {"linear_attn.in_proj_qkv.weight", "attn_qkv.weight"},
    {"linear_attn.in_proj_z.weight", "attn_gate.weight"},
    {"linear_attn.in_proj_b.weight", "ssm_beta.weight"},
    {"linear_attn.in_proj_a.weight", "ssm_alpha.weight"},
    {"linear_attn.conv1d.weight", "ssm_conv1d.weight"},
    {"linear_attn.dt_bias", "ssm_dt.bias"},
    {"linear_attn.A_log", "ssm_a_log"},
    {"linear_attn.norm.weight", "ssm_norm.weight"},
    {"linear_attn.out_proj.weight", "ssm_out.weight"},
};

constexpr std::pair<std::string_view, std::string_view> kGlobalNames[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

// Gemma 3 names its norms by position: post_attention_layernorm is the norm of the attention
// output, not the pre-MLP norm as in llama.
constexpr std::pair<std::string_view, std::string_view> kGemmaLayerNames[] = {
    {"post_attention_layernorm", "post_attention_norm"},
    {"pre_feedforward_layernorm", "ffn_norm"},
    {"post_feedforward_layernorm", "post_ffw_norm"},
};

// model_type -> llama.cpp architecture name.
constexpr std::pair<std::string_view, std::string_view> kArchNames[] = {
    {"llama", "llama"},
    {"qwen3", "qwen3"},
    {"qwen3_moe", "qwen3moe"},
    {"qwen3_5_text", "qwen35"},
    {"qwen3_5", "qwen35"},
    {"qwen3_5_moe_text", "qwen35moe"},
    {"qwen3_5_moe", "qwen35moe"},
    {"qwen3_next", "qwen3next"},
    {"gemma3_text", "gemma3"},
    {"gemma3", "gemma3"},
};

absl::StatusOr<json> read_json(const fs::path& p) {
  BW24_ASSIGN_OR_RETURN(auto f, MappedFile::open(p.string()));
  const char* b = reinterpret_cast<const char*>(f->data());
  json j = json::parse(b, b + f->size(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return error(Code::kFormat, "'{}' is not a JSON object", p.string());
  return j;
}

absl::Status add_int(TensorDirectory& d, const json& cfg, const char* hf_key, const std::string& key) {
  auto it = cfg.find(hf_key);
  if (it == cfg.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > INT32_MAX)
    return error(Code::kModel, "config.json '{}' is not a non-negative 32-bit integer", hf_key);
  return d.add_meta(key, MetaValue::of_u32(static_cast<uint32_t>(it->get<int64_t>())));
}

absl::Status add_float(TensorDirectory& d, const json* v, const char* what, const std::string& key) {
  if (!v || v->is_null()) return absl::OkStatus();
  if (!v->is_number()) return error(Code::kModel, "config.json '{}' is not a number", what);
  return d.add_meta(key, MetaValue::of_f32(v->get<float>()));
}

const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// config.json layer_types (per-layer kinds: sliding/full attention, linear/full attention) as the
// string array <arch>.attention.layer_types.
absl::Status add_layer_types(const json& cfg, const std::string& a, TensorDirectory& d) {
  const json* lt = find(cfg, "layer_types");
  if (!lt || !lt->is_array()) return absl::OkStatus();
  std::vector<std::string> types;
  for (const json& t : *lt) types.push_back(t.is_string() ? t.get<std::string>() : "");
  return d.add_meta(a + "attention.layer_types", MetaValue::of_strings(std::move(types)));
}

// Gemma 3 extras: window, attention scalar, per-layer types and the two RoPE bases (transformers 5
// keeps them in rope_parameters per layer type; older configs use rope_theta and
// rope_local_base_freq).
absl::Status map_gemma3(const json& cfg, const std::string& a, TensorDirectory& d) {
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "sliding_window", a + "attention.sliding_window"));
  BW24_RETURN_IF_ERROR(add_float(d, find(cfg, "query_pre_attn_scalar"), "query_pre_attn_scalar",
                                 a + "attention.query_pre_attn_scalar"));
  BW24_RETURN_IF_ERROR(add_layer_types(cfg, a, d));
  const json* rp = find(cfg, "rope_parameters");
  if (rp && rp->is_object() && rp->contains("sliding_attention")) {
    const json& full = (*rp)["full_attention"];
    const json& local = (*rp)["sliding_attention"];
    for (const json* p : {&full, &local})
      if (p->is_object() && p->value("rope_type", "default") != "default")
        return error(Code::kUnsupported, "Gemma 3 RoPE type '{}' is not supported yet", p->value("rope_type", ""));
    if (full.is_object() && !d.meta(a + "rope.freq_base"))
      BW24_RETURN_IF_ERROR(add_float(d, find(full, "rope_theta"), "rope_theta", a + "rope.freq_base"));
    if (local.is_object()) BW24_RETURN_IF_ERROR(add_float(d, find(local, "rope_theta"), "rope_theta", a + "rope.local.freq_base"));
  } else {
    BW24_RETURN_IF_ERROR(add_float(d, find(cfg, "rope_local_base_freq"), "rope_local_base_freq", a + "rope.local.freq_base"));
  }
  for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"})
    if (const json* c = find(cfg, cap); c && !c->is_null())
      return error(Code::kUnsupported, "Gemma 3 {} is not supported", cap);
  return absl::OkStatus();
}

// Qwen3-MoE / Qwen3.5-MoE router and expert sizes. transformers' default for norm_topk_prob is
// false.
absl::Status map_moe(const json& cfg, const std::string& a, TensorDirectory& d) {
  BW24_RETURN_IF_ERROR(add_int(d, cfg, cfg.contains("num_experts") ? "num_experts" : "num_local_experts",
                               a + "expert_count"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "num_experts_per_tok", a + "expert_used_count"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "moe_intermediate_size", a + "expert_feed_forward_length"));
  // Qwen3.5-MoE has no such field and always renormalizes.
  const json* norm = find(cfg, "norm_topk_prob");
  const bool renorm = a == "qwen35moe." || (norm && norm->is_boolean() && norm->get<bool>());
  BW24_RETURN_IF_ERROR(d.add_meta(a + "expert_weights_norm", MetaValue::of_bool(renorm)));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "shared_expert_intermediate_size", a + "expert_shared_feed_forward_length"));
  const json* step = find(cfg, "decoder_sparse_step");
  const json* dense = find(cfg, "mlp_only_layers");
  if ((step && step->is_number_integer() && step->get<int64_t>() != 1) || (dense && dense->is_array() && !dense->empty()))
    return error(Code::kUnsupported, "Qwen3-MoE with dense layers (decoder_sparse_step != 1 or mlp_only_layers) "
                 "is not supported yet");
  return absl::OkStatus();
}

// Qwen3.5 hybrid: linear-attention sizes under llama.cpp's ssm.* keys, the per-layer types, and
// the partial rotary dimension (head_dim * partial_rotary_factor).
absl::Status map_qwen35(const json& cfg, const std::string& a, TensorDirectory& d) {
  constexpr std::pair<const char*, const char*> kKeys[] = {
      {"linear_conv_kernel_dim", "ssm.conv_kernel"},       {"linear_key_head_dim", "ssm.state_size"},
      {"linear_num_key_heads", "ssm.group_count"},         {"linear_num_value_heads", "ssm.time_step_rank"},
      {"linear_value_head_dim", "ssm.value_head_dim"},     {"full_attention_interval", "full_attention_interval"},
  };
  for (auto [hf, gg] : kKeys) BW24_RETURN_IF_ERROR(add_int(d, cfg, hf, a + gg));
  BW24_RETURN_IF_ERROR(add_layer_types(cfg, a, d));
  const json* rp = find(cfg, "rope_parameters");
  const json* hd = find(cfg, "head_dim");
  if (rp && rp->is_object() && hd && hd->is_number_integer()) {
    const double factor = rp->value("partial_rotary_factor", 1.0);
    const int64_t dims = static_cast<int64_t>(hd->get<int64_t>() * factor);
    BW24_RETURN_IF_ERROR(d.add_meta(a + "rope.dimension_count", MetaValue::of_u32(static_cast<uint32_t>(dims))));
  }
  return absl::OkStatus();
}

absl::Status map_config(const json& cfg, const fs::path& dir, TensorDirectory& d) {
  if (const json* q = find(cfg, "quantization_config"); q && !q->is_null()) {
    std::string method = "unknown";
    if (q->is_object() && q->contains("quant_method") && (*q)["quant_method"].is_string())
      method = (*q)["quant_method"].get<std::string>();
    return error(Code::kUnsupported, "quantized Hugging Face checkpoint (quant_method '{}') is "
                 "not supported yet: FP8, NVFP4 and W4A16 arrive in their own issue", method);
  }
  const json* mt = find(cfg, "model_type");
  if (!mt || !mt->is_string()) return error(Code::kModel, "config.json has no model_type");
  std::string model_type = mt->get<std::string>();
  std::string arch = model_type;  // unknown types fall through to the arch registry's error
  for (auto [hf, gg] : kArchNames)
    if (model_type == hf) arch = std::string(gg);
  BW24_RETURN_IF_ERROR(d.add_meta("general.architecture", MetaValue::of_string(arch)));
  std::string name = dir.filename().string();
  if (name.empty()) name = dir.parent_path().filename().string();
  BW24_RETURN_IF_ERROR(d.add_meta("general.name", MetaValue::of_string(name)));
  const std::string a = arch + ".";
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "max_position_embeddings", a + "context_length"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "hidden_size", a + "embedding_length"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "num_hidden_layers", a + "block_count"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "intermediate_size", a + "feed_forward_length"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "num_attention_heads", a + "attention.head_count"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "num_key_value_heads", a + "attention.head_count_kv"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "head_dim", a + "attention.key_length"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "head_dim", a + "attention.value_length"));
  BW24_RETURN_IF_ERROR(add_int(d, cfg, "vocab_size", a + "vocab_size"));
  BW24_RETURN_IF_ERROR(add_float(d, find(cfg, "rms_norm_eps"), "rms_norm_eps",
                                 a + "attention.layer_norm_rms_epsilon"));
  // transformers 5 moved rope_theta into rope_parameters.
  const json* theta = find(cfg, "rope_theta");
  const json* rope_params = find(cfg, "rope_parameters");
  if (!theta && rope_params && rope_params->is_object()) theta = find(*rope_params, "rope_theta");
  BW24_RETURN_IF_ERROR(add_float(d, theta, "rope_theta", a + "rope.freq_base"));
  const json* scaling = find(cfg, "rope_scaling");
  if (!scaling || scaling->is_null()) scaling = rope_params;
  if (scaling && scaling->is_object()) {
    std::string type;
    for (const char* k : {"rope_type", "type"})
      if (scaling->contains(k) && (*scaling)[k].is_string()) type = (*scaling)[k].get<std::string>();
    if (!type.empty() && type != "default")
      BW24_RETURN_IF_ERROR(d.add_meta(a + "rope.scaling.type", MetaValue::of_string(type)));
  }
  // Special token ids (a list of eos ids keeps the first; generation_config.json may add more).
  for (auto [hf, gg] : {std::pair{"bos_token_id", "tokenizer.ggml.bos_token_id"},
                        std::pair{"eos_token_id", "tokenizer.ggml.eos_token_id"}}) {
    const json* v = find(cfg, hf);
    if (v && v->is_array() && !v->empty()) v = &(*v)[0];
    if (v && v->is_number_unsigned() && v->get<uint64_t>() <= UINT32_MAX && !d.meta(gg))
      BW24_RETURN_IF_ERROR(d.add_meta(gg, MetaValue::of_u32(v->get<uint32_t>())));
  }
  if (arch == "gemma3") BW24_RETURN_IF_ERROR(map_gemma3(cfg, a, d));
  if (arch == "qwen3moe") BW24_RETURN_IF_ERROR(map_moe(cfg, a, d));
  if (arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next") BW24_RETURN_IF_ERROR(map_qwen35(cfg, a, d));
  if (arch == "qwen35moe" || arch == "qwen3next") BW24_RETURN_IF_ERROR(map_moe(cfg, a, d));
  if (const json* tie = find(cfg, "tie_word_embeddings"); tie && tie->is_boolean())
    BW24_RETURN_IF_ERROR(d.add_meta("hf.tie_word_embeddings", MetaValue::of_bool(tie->get<bool>())));
  return absl::OkStatus();
}

// Which file holds which tensor: the index when sharded, else every *.safetensors file.
absl::StatusOr<std::vector<fs::path>> shard_files(const fs::path& dir, std::set<std::string>* listed) {
  std::vector<fs::path> files;
  fs::path index = dir / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(index, ec)) {
    BW24_ASSIGN_OR_RETURN(json j, read_json(index));
    const json* wm = find(j, "weight_map");
    if (!wm || !wm->is_object())
      return error(Code::kFormat, "'{}' has no weight_map object", index.string());
    std::set<std::string> names;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it.value().is_string())
        return error(Code::kFormat, "'{}': weight_map['{}'] is not a file name", index.string(), it.key());
      std::string f = it.value().get<std::string>();
      if (f.find('/') != std::string::npos || f == "..")
        return error(Code::kFormat, "'{}': shard name '{}' is not a plain file name", index.string(), f);
      names.insert(f);
      listed->insert(it.key());
    }
    for (const auto& n : names) files.push_back(dir / n);
    return files;
  }
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) return error(Code::kIo, "'{}' holds no *.safetensors file", dir.string());
  return files;
}

absl::StatusOr<uint32_t> ggml_type_of(const SafetensorsEntry& e, std::string* refusal) {
  if (e.dtype == "F32") return static_cast<uint32_t>(GgmlType::F32);
  if (e.dtype == "F16") return static_cast<uint32_t>(GgmlType::F16);
  if (e.dtype == "BF16") return static_cast<uint32_t>(GgmlType::BF16);
  if (e.dtype.starts_with("F8_"))
    *refusal = "dtype " + e.dtype + " (FP8) is not supported yet";
  else if (e.dtype == "U8" && e.name.ends_with("weight"))
    *refusal = "dtype U8: packed FP4 (NVFP4) weights are not supported yet";
  else if (e.name.ends_with("weight_packed") || e.name.ends_with("qweight"))
    *refusal = "dtype " + e.dtype + ": packed int4 (W4A16) tensors are not supported yet";
  else
    *refusal = "dtype " + e.dtype + " is not a weight type bw24 reads";
  return 0u;
}

// MoE expert tensors, stacked on load into llama.cpp's 3-D ffn_{gate,up,down}_exps (formats.md
// §1.5 item 10): per-expert 2-D tensors "mlp.experts.<j>.<gate|up|down>_proj.weight", or the
// fused "mlp.experts.gate_up_proj" [n_expert, 2F, E] (first half of each expert's rows = gate)
// and "mlp.experts.down_proj" [n_expert, E, F].
struct ExpertPart {
  int layer = -1, expert = -1;  // expert -1: fused over all experts
  std::string kind;             // "gate", "up", "down", "gate_up"
};

bool parse_expert(const std::string& hf_name, ExpertPart* out) {
  std::string n = hf_name;
  if (n.starts_with("model.language_model.")) n = "model." + n.substr(21);
  int layer = -1, j = -1, used = 0;
  char kind[16] = {};
  if (std::sscanf(n.c_str(), "model.layers.%d.mlp.experts.%d.%15[a-z]_proj.weight%n", &layer, &j, kind, &used) == 3 &&
      used == static_cast<int>(n.size())) {
    *out = {layer, j, kind};
    return out->kind == "gate" || out->kind == "up" || out->kind == "down";
  }
  if (std::sscanf(n.c_str(), "model.layers.%d.mlp.experts.%15[a-z_]%n", &layer, kind, &used) == 2 &&
      used == static_cast<int>(n.size())) {
    const std::string k = kind;
    if (k != "gate_up_proj" && k != "down_proj") return false;
    *out = {layer, -1, k == "gate_up_proj" ? "gate_up" : "down"};
    return true;
  }
  return false;
}

struct ExpertEntry {
  ExpertPart part;
  SafetensorsEntry e;
  uint32_t type;
};

// One 3-D tensor [cols, rows, n_expert] from the parts of (layer, kind), copied into memory the
// directory owns.
absl::Status stack_experts(TensorDirectory& d, int layer, const std::string& kind, std::vector<ExpertEntry>& parts,
                           int64_t n_expert) {
  const std::string gg = fmt::format("blk.{}.ffn_{}_exps.weight", layer, kind);
  std::sort(parts.begin(), parts.end(), [](const ExpertEntry& a, const ExpertEntry& b) { return a.part.expert < b.part.expert; });
  if (static_cast<int64_t>(parts.size()) != n_expert)
    return error(Code::kModel, "layer {}: {} of {} experts have a {}_proj weight", layer, parts.size(), n_expert, kind);
  const SafetensorsEntry& first = parts[0].e;
  for (size_t j = 0; j < parts.size(); ++j) {
    if (parts[j].part.expert != static_cast<int>(j))
      return error(Code::kModel, "layer {}: expert {} of {}_proj is missing", layer, j, kind);
    if (parts[j].e.shape != first.shape || parts[j].type != parts[0].type || first.shape.size() != 2)
      return error(Code::kModel, "layer {}: expert {} {}_proj differs in shape or dtype from expert 0", layer, j, kind);
  }
  TensorInfo t;
  t.name = gg;
  t.type = parts[0].type;
  t.n_dims = 3;
  t.ne = {static_cast<int64_t>(first.shape[1]), static_cast<int64_t>(first.shape[0]), n_expert, 1};
  t.n_bytes = first.n_bytes * static_cast<uint64_t>(n_expert);
  uint8_t* p = d.own_bytes(t.n_bytes);
  for (size_t j = 0; j < parts.size(); ++j) std::memcpy(p + j * first.n_bytes, parts[j].e.data, first.n_bytes);
  t.data = p;
  return d.add_tensor(std::move(t));
}

// The fused [n_expert, 2F, E] gate_up tensor split into gate and up stacks.
absl::Status split_gate_up(TensorDirectory& d, int layer, const ExpertEntry& x) {
  const auto& sh = x.e.shape;
  if (sh.size() != 3 || sh[1] % 2 != 0)
    return error(Code::kModel, "layer {}: mlp.experts.gate_up_proj has shape rank {}, expected [n_expert, 2F, E]",
                 layer, sh.size());
  const uint64_t half = x.e.n_bytes / (sh[0] * 2);  // one expert's gate (or up) block
  for (int h = 0; h < 2; ++h) {
    TensorInfo t;
    t.name = fmt::format("blk.{}.ffn_{}_exps.weight", layer, h == 0 ? "gate" : "up");
    t.type = x.type;
    t.n_dims = 3;
    t.ne = {static_cast<int64_t>(sh[2]), static_cast<int64_t>(sh[1] / 2), static_cast<int64_t>(sh[0]), 1};
    t.n_bytes = half * sh[0];
    uint8_t* p = d.own_bytes(t.n_bytes);
    for (uint64_t e = 0; e < static_cast<uint64_t>(sh[0]); ++e) std::memcpy(p + e * half, x.e.data + (2 * e + h) * half, half);
    t.data = p;
    BW24_RETURN_IF_ERROR(d.add_tensor(std::move(t)));
  }
  return absl::OkStatus();
}

// Whether name is a Qwen3-Next fused in_proj_qkvz / in_proj_ba weight, and of which layer.
bool qwen3next_fused(const std::string& name, int* layer) {
  for (const char* pattern : {"model.layers.%d.linear_attn.in_proj_qkvz.weight%n", "model.layers.%d.linear_attn.in_proj_ba.weight%n"}) {
    int used = 0;
    if (std::sscanf(name.c_str(), pattern, layer, &used) == 1 && used == static_cast<int>(name.size())) return true;
  }
  return false;
}

// A new tensor made of row ranges of `e` (each {first row, count}, in destination order), in
// memory the directory owns: how Qwen3-Next's per-key-head fused projections become llama.cpp's
// attn_qkv / attn_gate / ssm_beta / ssm_alpha.
absl::Status add_row_ranges(TensorDirectory& d, const SafetensorsEntry& e, uint32_t type, const std::string& name,
                            const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  if (e.shape.size() != 2) return error(Code::kModel, "tensor '{}' is not 2-D", e.name);
  const uint64_t row_bytes = e.n_bytes / static_cast<uint64_t>(e.shape[0]);
  int64_t rows = 0;
  for (auto [first, n] : ranges) {
    if (first < 0 || n < 0 || first + n > e.shape[0])
      return error(Code::kModel, "tensor '{}' has {} rows, fewer than its config implies", e.name, e.shape[0]);
    rows += n;
  }
  TensorInfo t;
  t.name = name;
  t.type = type;
  t.n_dims = 2;
  t.ne = {e.shape[1], rows, 1, 1};
  t.n_bytes = row_bytes * static_cast<uint64_t>(rows);
  uint8_t* p = d.own_bytes(t.n_bytes);
  uint64_t at = 0;
  for (auto [first, n] : ranges) {
    std::memcpy(p + at, e.data + static_cast<uint64_t>(first) * row_bytes, static_cast<uint64_t>(n) * row_bytes);
    at += static_cast<uint64_t>(n) * row_bytes;
  }
  t.data = p;
  return d.add_tensor(std::move(t));
}

// Qwen3-Next's in_proj_qkvz rows are grouped per key head g: [q (dk) | k (dk) | v (r dv) | z (r dv)],
// in_proj_ba's [b (r) | a (r)] (formats.md §1.5 item 5). Regrouped into all-q | all-k | all-v,
// all-z, all-b, all-a; value heads keep their order g r + j.
absl::Status split_qwen3next(TensorDirectory& d, const SafetensorsEntry& e, uint32_t type, int layer, bool qkvz) {
  const std::string a = d.meta("general.architecture")->s + ".";
  const MetaValue *hk_v = d.meta(a + "ssm.group_count"), *dk_v = d.meta(a + "ssm.state_size"),
                  *hv_v = d.meta(a + "ssm.time_step_rank"), *dv_v = d.meta(a + "ssm.value_head_dim");
  if (!hk_v || !dk_v || !hv_v || !dv_v || hk_v->u == 0 || hv_v->u % hk_v->u != 0)
    return error(Code::kModel, "config.json lacks consistent linear_num_key_heads / linear_num_value_heads / head dims");
  const int64_t hk = hk_v->u, dk = dk_v->u, r = hv_v->u / hk_v->u, dv = dv_v->u;
  std::vector<std::pair<int64_t, int64_t>> first, second;
  if (qkvz) {
    const int64_t group = 2 * dk + 2 * r * dv;
    std::vector<std::pair<int64_t, int64_t>> q, k, v, z;
    for (int64_t g = 0; g < hk; ++g) {
      q.push_back({g * group, dk});
      k.push_back({g * group + dk, dk});
      v.push_back({g * group + 2 * dk, r * dv});
      z.push_back({g * group + 2 * dk + r * dv, r * dv});
    }
    first = q;
    first.insert(first.end(), k.begin(), k.end());
    first.insert(first.end(), v.begin(), v.end());
    BW24_RETURN_IF_ERROR(add_row_ranges(d, e, type, fmt::format("blk.{}.attn_qkv.weight", layer), first));
    return add_row_ranges(d, e, type, fmt::format("blk.{}.attn_gate.weight", layer), z);
  }
  for (int64_t g = 0; g < hk; ++g) {
    first.push_back({g * 2 * r, r});
    second.push_back({g * 2 * r + r, r});
  }
  BW24_RETURN_IF_ERROR(add_row_ranges(d, e, type, fmt::format("blk.{}.ssm_beta.weight", layer), first));
  return add_row_ranges(d, e, type, fmt::format("blk.{}.ssm_alpha.weight", layer), second);
}

}  // namespace

std::string hf_to_gguf_name(const std::string& hf_name, const std::string& arch) {
  std::string n = hf_name;
  if (n.starts_with("model.language_model.")) n = "model." + n.substr(21);
  for (auto [hf, gg] : kGlobalNames)
    if (n == hf) return std::string(gg);
  constexpr std::string_view kLayers = "model.layers.";
  if (!n.starts_with(kLayers)) return "";
  size_t dot = n.find('.', kLayers.size());
  if (dot == std::string::npos) return "";
  std::string idx = n.substr(kLayers.size(), dot - kLayers.size());
  if (idx.empty() || idx.size() > 6 || idx.find_first_not_of("0123456789") != std::string::npos) return "";
  int layer = std::stoi(idx);
  std::string rest = n.substr(dot + 1);
  if (arch == "gemma3")
    for (auto [hf, gg] : kGemmaLayerNames)
      if (rest == std::string(hf) + ".weight") return fmt::format("blk.{}.{}.weight", layer, gg);
  if (arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next")
    for (auto [hf, gg] : kQwen35LayerNames)
      if (rest == hf) return fmt::format("blk.{}.{}", layer, gg);
  for (auto [hf, gg] : kLayerNames) {
    for (std::string_view kind : {".weight", ".bias"})
      if (rest == std::string(hf) + std::string(kind))
        return fmt::format("blk.{}.{}{}", layer, gg, kind);
  }
  return "";
}

absl::StatusOr<std::unique_ptr<TensorDirectory>> load_hf_directory(const std::string& dir_str) {
  fs::path dir(dir_str);
  auto d = std::make_unique<TensorDirectory>();
  d->origin = Origin::kHuggingFace;
  d->source_path = dir_str;
  std::error_code ec;
  if (!fs::exists(dir / "config.json", ec))
    return error(Code::kIo, "'{}' is a directory without config.json: not a Hugging Face model",
                 dir_str);
  BW24_ASSIGN_OR_RETURN(json cfg, read_json(dir / "config.json"));
  // Multimodal checkpoints keep the text model's config under text_config.
  if (cfg.contains("text_config") && cfg["text_config"].is_object()) {
    json text = cfg["text_config"];
    if (cfg.contains("quantization_config")) text["quantization_config"] = cfg["quantization_config"];
    cfg = text;
  }
  // The tokenizer first: its special ids (tokenizer_config.json) take precedence over config.json's.
  // A tokenizer this build cannot run does not make the weights unusable: warn and go on (the
  // model still takes token ids; the text calls then report BW24_ERR_UNSUPPORTED).
  if (fs::exists(dir / "tokenizer.json", ec)) {
    absl::Status st = load_hf_tokenizer(dir_str, d.get());
    if (code_of(st) == Code::kUnsupported) log(LogLevel::kWarn, "{}; the model is loaded without a tokenizer", message_of(st));
    else BW24_RETURN_IF_ERROR(st);
  }
  BW24_RETURN_IF_ERROR(map_config(cfg, dir, *d));

  const std::string arch = d->meta("general.architecture")->s;  // map_config always sets it
  std::set<std::string> listed;
  BW24_ASSIGN_OR_RETURN(auto files, shard_files(dir, &listed));
  std::set<std::string> found;
  std::map<std::pair<int, std::string>, std::vector<ExpertEntry>> experts;
  for (const fs::path& p : files) {
    BW24_ASSIGN_OR_RETURN(auto file, MappedFile::open(p.string()));
    auto entries = parse_safetensors(file->data(), file->size());
    if (!entries.ok()) return with_context(entries.status(), p.string());
    for (SafetensorsEntry& e : *entries) {
      found.insert(e.name);
      if (int layer = -1; arch == "qwen3next" && qwen3next_fused(e.name, &layer)) {
        std::string refusal;
        BW24_ASSIGN_OR_RETURN(uint32_t type, ggml_type_of(e, &refusal));
        if (!refusal.empty()) return error(Code::kUnsupported, "tensor '{}': {}", e.name, refusal);
        BW24_RETURN_IF_ERROR(split_qwen3next(*d, e, type, layer, e.name.find("qkvz") != std::string::npos));
        continue;
      }
      if (ExpertPart part; parse_expert(e.name, &part)) {
        std::string refusal;
        BW24_ASSIGN_OR_RETURN(uint32_t type, ggml_type_of(e, &refusal));
        if (!refusal.empty()) return error(Code::kUnsupported, "tensor '{}': {}", e.name, refusal);
        experts[{part.layer, part.kind}].push_back({part, e, type});
        continue;
      }
      std::string name = hf_to_gguf_name(e.name, arch);
      if (name.empty()) {
        // Kept under its own name, unused by the arch files: vision towers, and the MTP block
        // (mtp.*) that speculative decoding will read; nothing is dropped.
        if (e.name.starts_with("model.visual.") || e.name.starts_with("mtp."))
          log(LogLevel::kDebug, "keeping tensor '{}' under its Hugging Face name (not run)", e.name);
        name = e.name;
      }
      std::string refusal;
      BW24_ASSIGN_OR_RETURN(uint32_t type, ggml_type_of(e, &refusal));
      if (!refusal.empty()) {
        d->add_refusal(name, fmt::format("tensor '{}' in {}: {}", e.name, p.filename().string(), refusal));
        continue;
      }
      if (e.shape.size() > 4)
        return error(Code::kUnsupported, "tensor '{}' has {} dimensions (max 4)", e.name, e.shape.size());
      TensorInfo t;
      t.name = name;
      t.type = type;
      t.n_dims = static_cast<int32_t>(e.shape.size());
      for (size_t k = 0; k < e.shape.size(); ++k) t.ne[k] = e.shape[e.shape.size() - 1 - k];
      if (name.ends_with("ssm_conv1d.weight") && t.n_dims == 3 && t.ne[1] == 1) {  // [C, 1, K] -> ne {K, C}
        t.ne = {t.ne[0], t.ne[2], 1, 1};
        t.n_dims = 2;
      }
      t.data = e.data;
      t.n_bytes = e.n_bytes;
      BW24_RETURN_IF_ERROR(d->add_tensor(std::move(t)));
    }
    d->keep_alive(std::move(file));
  }
  if (!experts.empty()) {
    const MetaValue* n_exp = d->meta(arch + ".expert_count");
    if (!n_exp) return error(Code::kModel, "expert tensors but no num_experts in config.json");
    for (auto& [key, parts] : experts) {
      const auto& [layer, kind] = key;
      if (parts[0].part.expert < 0) {  // fused, one tensor for all experts
        if (kind == "gate_up") {
          BW24_RETURN_IF_ERROR(split_gate_up(*d, layer, parts[0]));
          continue;
        }
        const auto& sh = parts[0].e.shape;
        if (sh.size() != 3) return error(Code::kModel, "layer {}: mlp.experts.down_proj is not 3-D", layer);
        TensorInfo t;
        t.name = fmt::format("blk.{}.ffn_down_exps.weight", layer);
        t.type = parts[0].type;
        t.n_dims = 3;
        t.ne = {static_cast<int64_t>(sh[2]), static_cast<int64_t>(sh[1]), static_cast<int64_t>(sh[0]), 1};
        t.data = parts[0].e.data;
        t.n_bytes = parts[0].e.n_bytes;
        BW24_RETURN_IF_ERROR(d->add_tensor(std::move(t)));
        continue;
      }
      BW24_RETURN_IF_ERROR(stack_experts(*d, layer, kind, parts, n_exp->u));
    }
  }
  for (const auto& n : listed)
    if (!found.count(n))
      return error(Code::kFormat, "tensor '{}' is listed in model.safetensors.index.json but no "
                   "shard holds it", n);
  return d;
}

}  // namespace bw24::loaders
