#include "benchmarks/synthetic.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "lib/core/dtype.h"
#include "lib/core/status.h"
#include "lib/quant/traits.h"
#include "loaders/gguf/gguf.h"

namespace bw24::bench {
namespace {

using loaders::MetaValue;
using loaders::TensorDirectory;
using loaders::TensorInfo;

struct Shape {
  const char* name;
  const char* arch;
  int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab;
  float theta;
  bool tied;
  int n_expert = 0, n_used = 0, n_ff_exp = 0;  // MoE: experts per layer, used per token, expert FFN
  int n_ff_shared = 0;                          // shared expert (qwen35moe)
  int lin_k_heads = 0, lin_v_heads = 0, lin_head_dim = 0;  // hybrids: delta-net heads (d_k = d_v)
};

// Public config.json values of each model.
constexpr Shape kShapes[] = {
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 128, 3072, 151936, 1e6f, true},
    {"qwen3-8b", "qwen3", 4096, 36, 32, 8, 128, 12288, 151936, 1e6f, false},
    {"qwen3-14b", "qwen3", 5120, 40, 40, 8, 128, 17408, 151936, 1e6f, false},
    {"qwen3-32b", "qwen3", 5120, 64, 64, 8, 128, 25600, 151936, 1e6f, false},
    {"llama3-8b", "llama", 4096, 32, 32, 8, 128, 14336, 128256, 5e5f, false},
    // Qwen3-8B's layer widths in two layers and a small vocabulary: the GPU tests' shape for the launches
    // whose rules need the real widths (the folded norms: cuda::gemv_q8_add_normed).
    {"mid-qwen3", "qwen3", 4096, 2, 32, 8, 128, 12288, 2048, 1e6f, false},
    // Qwen3.5-9B's widths in four layers (three delta nets, then gated attention) and a small vocabulary.
    {"mid-qwen35", "qwen35", 4096, 4, 16, 4, 256, 12288, 2048, 1e7f, false, 0, 0, 0, 0, 16, 32, 128},
    // Small shapes for the GPU-vs-CPU tests (one K-quant block per row at n_embd 256).
    {"tiny-qwen3", "qwen3", 256, 2, 4, 2, 64, 768, 2048, 1e6f, false},
    {"tiny-llama", "llama", 256, 2, 4, 4, 64, 512, 2048, 1e4f, true},
    {"qwen3-30b-a3b", "qwen3moe", 2048, 48, 32, 4, 128, 6144, 151936, 1e6f, false, 128, 8, 768},
    {"tiny-qwen3moe", "qwen3moe", 256, 2, 4, 2, 64, 768, 2048, 1e6f, false, 8, 2, 256},
    // Every expert for every token: no routing near-ties, so bf16 prefill compares like a dense model.
    {"tiny-qwen3moe-all", "qwen3moe", 256, 2, 4, 2, 64, 768, 2048, 1e6f, false, 8, 8, 256},
    // Hybrids (transformers' Qwen3_5TextConfig / Qwen3_5MoeTextConfig defaults = the 9B and the
    // 35B-A3B; the 27B from its config.json): every 4th layer gated attention, else a delta net.
    {"qwen3.5-9b", "qwen35", 4096, 32, 16, 4, 256, 12288, 248320, 1e7f, false, 0, 0, 0, 0, 16, 32, 128},
    {"qwen3.5-27b", "qwen35", 5120, 64, 24, 4, 256, 17408, 248320, 1e7f, false, 0, 0, 0, 0, 16, 48, 128},
    {"qwen3.6-35b-a3b", "qwen35moe", 2048, 40, 16, 2, 256, 512, 248320, 1e7f, false, 256, 8, 512, 512, 16, 32, 128},
    {"tiny-qwen35", "qwen35", 256, 4, 4, 2, 64, 512, 2048, 1e7f, false, 0, 0, 0, 0, 2, 4, 64},
    {"tiny-qwen35moe", "qwen35moe", 256, 4, 4, 2, 64, 512, 2048, 1e7f, false, 8, 2, 256, 256, 2, 4, 64},
    // The smallest of each architecture (Q8_0 / F32: rows of 32-multiples), as seeds of the model
    // fuzz target (tools/fuzz-seeds.sh writes them at test time): 60-270 KB each (320 tokens:
    // the synthetic vocabulary needs its 256 bytes and specials).
    {"fuzz-qwen3", "qwen3", 64, 1, 2, 1, 32, 64, 320, 1e6f, false},
    {"fuzz-llama", "llama", 64, 1, 2, 2, 32, 64, 320, 1e4f, true},
    {"fuzz-qwen3moe", "qwen3moe", 64, 1, 2, 1, 32, 64, 320, 1e6f, false, 4, 2, 32},
    {"fuzz-qwen35", "qwen35", 64, 4, 2, 1, 32, 64, 320, 1e7f, false, 0, 0, 0, 0, 1, 2, 32},
    {"fuzz-qwen35moe", "qwen35moe", 64, 4, 2, 1, 32, 64, 320, 1e7f, false, 4, 2, 32, 32, 1, 2, 32},
};

// xorshift64*: fast random bytes.
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
};

// A standard normal sample (Box-Muller).
float gaussian(Rng& rng) {
  const double u1 = ((rng.next() >> 11) + 1.0) / 9007199254740993.0, u2 = (rng.next() >> 11) / 9007199254740992.0;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

void put_half(uint8_t* p, float v) {
  uint16_t h = f32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

// Random blocks of `type` with sane scales.
void fill(GgmlType type, uint8_t* data, uint64_t bytes, Rng& rng) {
  for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t r = rng.next();
    std::memcpy(data + i, &r, 8);
  }
  const TypeInfo* ti = type_info(type);
  const uint64_t blocks = bytes / ti->block_bytes;
  for (uint64_t b = 0; b < blocks; ++b) {
    uint8_t* p = data + b * ti->block_bytes;
    switch (type) {
      // K-quants: dmin = d x the mean quant, so d sc q - dmin m averages to zero over random 6-bit
      // sc and m (a positive mean in every weight made all tokens' hidden states point one way
      // after a layer, and a random router then sent every token to the same few experts).
      case GgmlType::Q4_K: put_half(p, 0.002f); put_half(p + 2, 0.015f); break;
      case GgmlType::Q6_K: put_half(p + 208, 0.0005f); break;
      case GgmlType::Q5_K: put_half(p, 0.001f); put_half(p + 2, 0.0155f); break;
      case GgmlType::Q8_0: case GgmlType::Q4_0: case GgmlType::Q5_0: put_half(p, 0.002f); break;
      case GgmlType::Q4_1: case GgmlType::Q5_1: put_half(p, 0.002f); put_half(p + 2, -0.015f); break;
      case GgmlType::IQ4_XS: put_half(p, 0.00002f); break;  // d (ls - 32) level stays below ~0.1
      case GgmlType::F32: {  // router weights: small values, no NaN bit patterns
        const float v = ((rng.next() >> 40) / 16777216.0f - 0.5f) * 0.05f;
        std::memcpy(p, &v, 4);
        break;
      }
      case GgmlType::BF16: case GgmlType::F16: {
        uint16_t bits = 0;
        std::memcpy(&bits, p, 2);
        // A small random value: keep sign and mantissa bits, fix the exponent near 2^-7.
        bits = type == GgmlType::BF16 ? static_cast<uint16_t>((bits & 0x807F) | (120u << 7))
                                      : static_cast<uint16_t>((bits & 0x83FF) | (8u << 10));
        std::memcpy(p, &bits, 2);
        break;
      }
      default: break;
    }
  }
}

}  // namespace

std::vector<std::string> synthetic_shapes() {
  std::vector<std::string> out;
  for (const Shape& s : kShapes) out.push_back(s.name);
  return out;
}

absl::Status add_synthetic_vocab(TensorDirectory& d) {
  const TensorInfo* emb = d.tensor("token_embd.weight");
  if (!emb) return error(Code::kModel, "no token_embd.weight");
  const int64_t n = emb->ne[1];
  if (n < 259) return error(Code::kInvalidArgument, "a vocabulary of {} tokens is too small", n);
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // llama.cpp: 1 normal, 2 unknown, 3 control, 6 byte
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(6);
  }
  while (static_cast<int64_t>(tokens.size()) < n) {
    tokens.push_back(fmt::format("\u2581t{}", tokens.size()));
    types.push_back(1);
  }
  std::vector<float> scores(tokens.size());
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.model", MetaValue::of_string("llama")));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.tokens", MetaValue::of_strings(std::move(tokens))));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.scores", MetaValue::of_f32s(scores)));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.token_type", MetaValue::of_i32s(types)));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.unknown_token_id", MetaValue::of_u32(0)));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.bos_token_id", MetaValue::of_u32(1)));
  BW24_RETURN_IF_ERROR(d.add_meta("tokenizer.ggml.eos_token_id", MetaValue::of_u32(2)));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TensorDirectory>> build_synthetic(const std::string& shape_name,
                                                                 const std::string& quant) {
  const Shape* sh = nullptr;
  for (const Shape& s : kShapes)
    if (shape_name == s.name) sh = &s;
  if (!sh) return error(Code::kInvalidArgument, "unknown synthetic shape '{}'", shape_name);
  auto d = std::make_unique<TensorDirectory>();
  d->source_path = "synthetic:" + shape_name + ":" + quant;
  const std::string a = std::string(sh->arch) + ".";
  BW24_RETURN_IF_ERROR(d->add_meta("general.architecture", MetaValue::of_string(sh->arch)));
  BW24_RETURN_IF_ERROR(d->add_meta("general.name", MetaValue::of_string(shape_name + " " + quant + " (synthetic)")));
  // The mix's llama.cpp id, as llama-quantize records it: both engines' reports then name it.
  if (const std::optional<uint32_t> id = loaders::file_type_id(quant))
    BW24_RETURN_IF_ERROR(d->add_meta("general.file_type", MetaValue::of_u32(*id)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "context_length", MetaValue::of_u32(40960)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "embedding_length", MetaValue::of_u32(sh->n_embd)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "block_count", MetaValue::of_u32(sh->n_layer)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "feed_forward_length", MetaValue::of_u32(sh->n_ff)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "attention.head_count", MetaValue::of_u32(sh->n_head)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "attention.head_count_kv", MetaValue::of_u32(sh->n_head_kv)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "attention.key_length", MetaValue::of_u32(sh->head_dim)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "attention.value_length", MetaValue::of_u32(sh->head_dim)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "attention.layer_norm_rms_epsilon", MetaValue::of_f32(1e-6f)));
  BW24_RETURN_IF_ERROR(d->add_meta(a + "rope.freq_base", MetaValue::of_f32(sh->theta)));
  if (sh->lin_k_heads > 0) {
    const int rope_dims = sh->head_dim / 4, pairs = rope_dims / 2;  // partial_rotary_factor 0.25
    BW24_RETURN_IF_ERROR(d->add_meta(a + "rope.dimension_count", MetaValue::of_u32(rope_dims)));
    const int32_t third = (pairs + 2) / 3;  // [11, 11, 10] at 32 pairs
    BW24_RETURN_IF_ERROR(d->add_meta(a + "rope.dimension_sections", MetaValue::of_i32s({third, third, pairs - 2 * third, 0})));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "ssm.conv_kernel", MetaValue::of_u32(4)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "ssm.state_size", MetaValue::of_u32(sh->lin_head_dim)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "ssm.group_count", MetaValue::of_u32(sh->lin_k_heads)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "ssm.time_step_rank", MetaValue::of_u32(sh->lin_v_heads)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "ssm.inner_size", MetaValue::of_u32(sh->lin_v_heads * sh->lin_head_dim)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "full_attention_interval", MetaValue::of_u32(4)));
  }
  if (sh->n_ff_shared > 0)
    BW24_RETURN_IF_ERROR(d->add_meta(a + "expert_shared_feed_forward_length", MetaValue::of_u32(sh->n_ff_shared)));
  if (sh->n_expert > 0) {
    BW24_RETURN_IF_ERROR(d->add_meta(a + "expert_count", MetaValue::of_u32(sh->n_expert)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "expert_used_count", MetaValue::of_u32(sh->n_used)));
    BW24_RETURN_IF_ERROR(d->add_meta(a + "expert_feed_forward_length", MetaValue::of_u32(sh->n_ff_exp)));
  }

  // Per-tensor types of each mix. Q4_K_M as llama-quantize lays it out: Q6_K for the output, and
  // for attn_v / ffn_down on the first and last eighth of the layers and every third in between.
  auto more_bits = [&](int il) {
    const int n = sh->n_layer;
    return il < n / 8 || il >= 7 * n / 8 || (il - n / 8) % 3 == 2;
  };
  auto type_for = [&](const std::string& name, int il) -> absl::StatusOr<GgmlType> {
    // llama-quantize keeps the router and the delta net's conv taps in F32.
    if (name == "ffn_gate_inp.weight" || name == "ssm_conv1d.weight") return GgmlType::F32;
    if (quant == "Q4_K_M" || quant == "Q5_K_M") {  // Q5_K_M: the same mix around Q5_K
      if (name == "output.weight") return GgmlType::Q6_K;
      if ((name == "attn_v.weight" || name.starts_with("ffn_down")) && more_bits(il)) return GgmlType::Q6_K;
      return quant == "Q4_K_M" ? GgmlType::Q4_K : GgmlType::Q5_K;
    }
    if (quant == "Q8_0") return GgmlType::Q8_0;
    if (quant == "Q4_0") return GgmlType::Q4_0;
    if (quant == "Q4_1") return GgmlType::Q4_1;
    if (quant == "Q5_0") return GgmlType::Q5_0;
    if (quant == "Q5_1") return GgmlType::Q5_1;
    if (quant == "IQ4_XS") return name == "output.weight" ? GgmlType::Q6_K : GgmlType::IQ4_XS;
    if (quant == "Q6_K") return GgmlType::Q6_K;
    if (quant == "BF16") return GgmlType::BF16;
    if (quant == "F16") return GgmlType::F16;
    return error(Code::kInvalidArgument,
                 "unknown quant mix '{}' (Q4_K_M, Q5_K_M, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q6_K, IQ4_XS, BF16, F16)", quant);
  };
  Rng rng;
  const bool realistic = std::string_view(sh->name).starts_with("tiny");
  auto add = [&](const std::string& name, int il, int64_t ne0, int64_t ne1, int64_t ne2 = 1) -> absl::Status {
    TensorInfo t;
    t.name = il >= 0 ? "blk." + std::to_string(il) + "." + name : name;
    if (ne1 == 1) {  // norms: f32 ones with noise; ssm_a negative (-exp(A_log)), dt bias small
      t.type = 0;
      t.n_dims = 1;
      t.ne = {ne0, 1, 1, 1};
      t.n_bytes = static_cast<uint64_t>(ne0) * 4;
      uint8_t* p = d->own_bytes(t.n_bytes);
      auto* f = reinterpret_cast<float*>(p);
      const float base = name == "ssm_a" ? -1.0f : name == "ssm_dt.bias" ? 0.0f : 1.0f;
      for (int64_t i = 0; i < ne0; ++i) f[i] = base + ((rng.next() >> 40) / 16777216.0f - 0.5f) * 0.1f;
      t.data = p;
      return d->add_tensor(std::move(t));
    }
    BW24_ASSIGN_OR_RETURN(GgmlType type, type_for(name, il));
    // Rows shorter than a super-block fall back as llama-quantize does: Q8_0, else F16.
    if (ne0 % type_info(type)->block_elems != 0) type = ne0 % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
    const TypeInfo* ti = type_info(type);
    t.type = static_cast<uint32_t>(type);
    t.n_dims = ne2 > 1 ? 3 : 2;
    t.ne = {ne0, ne1, ne2, 1};
    t.n_bytes = static_cast<uint64_t>(ne0 / ti->block_elems) * ti->block_bytes * static_cast<uint64_t>(ne1 * ne2);
    uint8_t* p = d->own_bytes(t.n_bytes);
    if (realistic) {
      // Trained-like rows: N(0, 1 / fan_in) through the reference quantizer (a few seconds at
      // most for the tiny shapes; the big ones would take minutes, and speed does not need it).
      const quant::QuantTraits* q = quant::traits(type);
      if (!q || !q->quantize) return error(Code::kUnsupported, "no reference quantizer for {}", ti->name);
      std::vector<float> row(static_cast<size_t>(ne0));
      const uint64_t rb = t.n_bytes / static_cast<uint64_t>(ne1 * ne2);
      const float sd = 1.0f / std::sqrt(static_cast<float>(ne0));
      for (int64_t r = 0; r < ne1 * ne2; ++r) {
        for (auto& v : row) v = sd * gaussian(rng);
        q->quantize(row.data(), p + static_cast<uint64_t>(r) * rb, ne0);
      }
    } else {
      fill(type, p, t.n_bytes, rng);
    }
    t.data = p;
    return d->add_tensor(std::move(t));
  };
  const int64_t E = sh->n_embd, qw = int64_t{sh->n_head} * sh->head_dim, kw = int64_t{sh->n_head_kv} * sh->head_dim;
  BW24_RETURN_IF_ERROR(add("token_embd.weight", -1, E, sh->n_vocab));
  BW24_RETURN_IF_ERROR(add("output_norm.weight", -1, E, 1));
  if (!sh->tied) BW24_RETURN_IF_ERROR(add("output.weight", -1, E, sh->n_vocab));
  const bool hybrid = sh->lin_k_heads > 0;
  const int64_t Hk = sh->lin_k_heads, Hv = sh->lin_v_heads, dl = sh->lin_head_dim;
  const int64_t conv_dim = 2 * Hk * dl + Hv * dl, Vd = Hv * dl;
  for (int il = 0; il < sh->n_layer; ++il) {
    BW24_RETURN_IF_ERROR(add("attn_norm.weight", il, E, 1));
    if (hybrid && (il + 1) % 4 != 0) {  // gated delta net
      BW24_RETURN_IF_ERROR(add("attn_qkv.weight", il, E, conv_dim));
      BW24_RETURN_IF_ERROR(add("attn_gate.weight", il, E, Vd));
      BW24_RETURN_IF_ERROR(add("ssm_beta.weight", il, E, Hv));
      BW24_RETURN_IF_ERROR(add("ssm_alpha.weight", il, E, Hv));
      BW24_RETURN_IF_ERROR(add("ssm_conv1d.weight", il, 4, conv_dim));
      BW24_RETURN_IF_ERROR(add("ssm_dt.bias", il, Hv, 1));
      BW24_RETURN_IF_ERROR(add("ssm_a", il, Hv, 1));
      BW24_RETURN_IF_ERROR(add("ssm_norm.weight", il, dl, 1));
      BW24_RETURN_IF_ERROR(add("ssm_out.weight", il, Vd, E));
    } else {
      BW24_RETURN_IF_ERROR(add("attn_q.weight", il, E, hybrid ? 2 * qw : qw));  // hybrids: [q | gate] per head
      BW24_RETURN_IF_ERROR(add("attn_k.weight", il, E, kw));
      BW24_RETURN_IF_ERROR(add("attn_v.weight", il, E, kw));
      BW24_RETURN_IF_ERROR(add("attn_output.weight", il, qw, E));
      if (std::string_view(sh->arch).starts_with("qwen3")) {
        BW24_RETURN_IF_ERROR(add("attn_q_norm.weight", il, sh->head_dim, 1));
        BW24_RETURN_IF_ERROR(add("attn_k_norm.weight", il, sh->head_dim, 1));
      }
    }
    BW24_RETURN_IF_ERROR(add(hybrid ? "post_attention_norm.weight" : "ffn_norm.weight", il, E, 1));
    if (sh->n_expert > 0) {
      BW24_RETURN_IF_ERROR(add("ffn_gate_inp.weight", il, E, sh->n_expert));
      BW24_RETURN_IF_ERROR(add("ffn_gate_exps.weight", il, E, sh->n_ff_exp, sh->n_expert));
      BW24_RETURN_IF_ERROR(add("ffn_up_exps.weight", il, E, sh->n_ff_exp, sh->n_expert));
      BW24_RETURN_IF_ERROR(add("ffn_down_exps.weight", il, sh->n_ff_exp, E, sh->n_expert));
      if (sh->n_ff_shared > 0) {
        BW24_RETURN_IF_ERROR(add("ffn_gate_inp_shexp.weight", il, E, 1));
        BW24_RETURN_IF_ERROR(add("ffn_gate_shexp.weight", il, E, sh->n_ff_shared));
        BW24_RETURN_IF_ERROR(add("ffn_up_shexp.weight", il, E, sh->n_ff_shared));
        BW24_RETURN_IF_ERROR(add("ffn_down_shexp.weight", il, sh->n_ff_shared, E));
      }
      continue;
    }
    BW24_RETURN_IF_ERROR(add("ffn_gate.weight", il, E, sh->n_ff));
    BW24_RETURN_IF_ERROR(add("ffn_up.weight", il, E, sh->n_ff));
    BW24_RETURN_IF_ERROR(add("ffn_down.weight", il, sh->n_ff, E));
  }
  return d;
}

}  // namespace bw24::bench
