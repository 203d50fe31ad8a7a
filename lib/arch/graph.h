// The declarative description of a model that arch files build and backends run: which weight
// feeds which block, with every dimension and option spelled out. No backend code here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loaders/common/tensor_directory.h"

namespace bw24::arch {

enum class RopeStyle { kNorm, kNeox };  // kNorm: adjacent pairs (x0,x1); kNeox: (x_i, x_{i+d/2})
enum class Activation { kSilu, kGeluTanh };

// A weight as stored: ne[0] = input features (contiguous), ne[1] = output rows.
struct Weight {
  const loaders::TensorInfo* t = nullptr;
  explicit operator bool() const { return t != nullptr; }
  int64_t cols() const { return t->ne[0]; }
  int64_t rows() const { return t->ne[1]; }
};

struct Norm {
  Weight w;
  bool one_plus = false;  // y = x_hat * (1 + w) (HF Gemma / Qwen3-Next style) instead of x_hat * w
};

struct AttentionBlock {
  Norm norm;
  Weight wq, wk, wv, wo;
  bool gated = false;      // Qwen3.5: wq gives [q | gate] per head; output *= sigmoid(gate)
  Norm q_norm, k_norm;     // per-head RMSNorm before RoPE (Qwen3); w empty = none
  int32_t n_head = 0, n_head_kv = 0, head_dim = 0;
  int32_t rope_dims = 0;   // leading channels of each head that rotate
  RopeStyle rope_style = RopeStyle::kNorm;
  float rope_theta = 10000.0f;
  int32_t sliding_window = 0;  // 0 = full causal attention; else keys in (pos - window, pos]
  float scale = 0;             // score scale (1/sqrt(head_dim) unless the arch says otherwise)
  Norm post_norm;              // Gemma: RMSNorm of the block output before the residual add
};

// A mixture of experts (Qwen3-MoE): router logits -> softmax -> the n_used largest probabilities
// (renormalized to sum 1 when norm_topk) weight the outputs of their experts, each a gated MLP.
// Qwen3.5-MoE adds a shared expert, always on: + sigmoid(shared_gate . x) * down(act(gate x) * up x).
struct MoeBlock {
  Weight router;                         // ffn_gate_inp: [n_embd] -> [n_expert]
  Weight gate_exps, up_exps, down_exps;  // stacked: [n_embd, n_ff_exp, n_expert], [n_ff_exp, n_embd, n_expert]
  Weight shared_gate_inp;                // ffn_gate_inp_shexp: [n_embd] -> 1 (empty: no shared expert)
  Weight shared_gate, shared_up, shared_down;  // ffn_{gate,up,down}_shexp
  int32_t n_expert = 0, n_used = 0;
  bool norm_topk = true;
};

struct MlpBlock {
  Norm norm;
  Weight gate, up, down;  // dense MLP (empty when moe.n_expert > 0)
  MoeBlock moe;
  Activation act = Activation::kSilu;
  Norm post_norm;  // Gemma: RMSNorm of the MLP output before the residual add
  bool is_moe() const { return moe.n_expert > 0; }
};

// Gated DeltaNet (Qwen3.5 linear attention, formats.md §3.5): in_qkv -> causal depthwise conv1d
// (kernel conv_kernel, SiLU) -> q, k (l2-normalized per head, q scaled by 1/sqrt(d_k)), v; per
// value head a state S [d_k][d_v]: S *= exp(g), S += k (beta (v - S^T k))^T, o = S^T q, with
// beta = sigmoid(in_b x), g = -exp(A_log) * softplus(in_a x + dt_bias); o through a gated
// RMSNorm (norm(o) * w * silu(z), z = in_z x) and out_proj. Key heads serve n_v / n_k
// consecutive value heads.
struct DeltaNetBlock {
  Norm norm;                                 // the layer's input norm
  Weight in_qkv, in_z, in_b, in_a, out_proj;
  Weight in_ba;                              // Qwen3-Next GGUF: b and a fused, per key head [b (r) | a (r)]
  Weight conv;                               // [conv_kernel, conv_dim] (channel-major taps)
  Weight dt_bias, a, gated_norm;             // [n_v], [n_v], [d_v]
  bool a_is_log = true;     // a holds A_log (HF); false: GGUF's ssm_a = -exp(A_log)
  bool v_heads_tiled = false;  // GGUF (formats.md §1.5): value head h uses key head h mod n_k,
                               // HF: h / (n_v / n_k)
  int32_t n_k_heads = 0, n_v_heads = 0, d_k = 0, d_v = 0, conv_kernel = 0;
  int64_t conv_dim() const { return int64_t{2} * n_k_heads * d_k + int64_t{n_v_heads} * d_v; }
};

struct Layer {
  bool recurrent = false;  // true: delta_net mixes tokens; false: attn does
  AttentionBlock attn;
  DeltaNetBlock delta_net;
  MlpBlock mlp;
};

struct ModelGraph {
  std::string arch;
  int32_t n_vocab = 0, n_embd = 0, n_ctx_train = 0;
  float norm_eps = 1e-5f;
  Weight tok_embd;
  float embd_scale = 1.0f;
  std::vector<Layer> layers;
  Norm output_norm;
  Weight output;  // == tok_embd when the embeddings are tied
  bool tied_embeddings = false;
  std::vector<int32_t> eog_tokens;  // end-of-generation ids (eos, eot, ...)
};

}  // namespace bw24::arch
