#!/usr/bin/env python3
"""Golden fixtures from an independent implementation (Hugging Face transformers, fp32, CPU).

For each tiny random-initialized model this writes tests/data/golden/<name>/:
  config.json + model.safetensors  the HF checkpoint (save_pretrained)
  fused/ (qwen3_moe only)          the checkpoint with transformers' fused expert tensors
  (qwen3_5's GGUF carries llama.cpp's qwen35 transforms: norms +1, ssm_a = -exp(A_log), value
  heads reordered; tests/reference/llamacpp_qwen35_check.py runs llama.cpp on the same tensors)
  model.gguf                       the same weights under llama.cpp's names, written with the
                                   `gguf` package the way convert_hf_to_gguf.py does (llama Q/K
                                   rows permuted for adjacent-pair RoPE; qwen3 not permuted)
  logits.f32                       transformers' logits for the prompt, float32 [n_prompt][vocab]
  golden.json                      prompt ids, 32-token greedy continuation, smallest top-2 margin

Norm weights are randomized (1 + 0.5 * N(0,1)) so a loader that ignores them fails.
Run: python tests/reference/make_goldens.py   (needs torch, transformers, safetensors, gguf, numpy)
"""
import json
import os
import sys

import numpy as np
import torch
import gguf
from transformers import (Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig, LlamaForCausalLM,
                          Qwen3_5ForCausalLM, Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig,
                          Qwen3_5TextConfig, Qwen3Config, Qwen3ForCausalLM, Qwen3NextConfig,
                          Qwen3NextForCausalLM,
                          Qwen3MoeConfig, Qwen3MoeForCausalLM)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden")
PROMPT = [1, 17, 42, 99, 3, 200, 77, 5, 128, 64]
N_GREEDY = 32

COMMON = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
              bos_token_id=1, eos_token_id=2, attention_bias=False)

# The hybrids' common shape: three gated-delta-net layers then a gated full-attention one (the 3:1
# pattern), 2 key heads serving 4 value heads, partial rotary (a quarter of head_dim).
HYBRID = dict(COMMON, num_hidden_layers=4, head_dim=32, rms_norm_eps=1e-6, linear_conv_kernel_dim=4,
              linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=2,
              linear_num_value_heads=4, tie_word_embeddings=False,
              layer_types=["linear_attention"] * 3 + ["full_attention"])
MROPE = {"rope_theta": 10000000.0, "partial_rotary_factor": 0.25, "rope_type": "default",
         "mrope_section": [1, 1, 2], "mrope_interleaved": True}

MODELS = {
    "llama": (LlamaConfig, LlamaForCausalLM,
              dict(COMMON, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False)),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM,
              dict(COMMON, head_dim=32, rms_norm_eps=1e-6, rope_theta=1000000.0,
                   tie_word_embeddings=False)),
    "qwen3_tied": (Qwen3Config, Qwen3ForCausalLM,
                   dict(COMMON, head_dim=32, rms_norm_eps=1e-6, rope_theta=1000000.0,
                        tie_word_embeddings=True)),
    # Six layers so the 5:1 sliding/global pattern appears; a window of 4 so it bites within the
    # prompt; the local and global RoPE bases llama.cpp assumes for gemma3 GGUFs.
    "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM,
               dict(COMMON, num_hidden_layers=6, head_dim=32, query_pre_attn_scalar=32,
                    sliding_window=4, rms_norm_eps=1e-6, hidden_activation="gelu_pytorch_tanh",
                    rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                     "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                    tie_word_embeddings=True, final_logit_softcapping=None,
                    attn_logit_softcapping=None)),
    # Eight experts, two per token, renormalized (Qwen3-30B-A3B's router settings, tiny sizes).
    "qwen3_moe": (Qwen3MoeConfig, Qwen3MoeForCausalLM,
                  dict(COMMON, head_dim=32, rms_norm_eps=1e-6, rope_theta=1000000.0,
                       tie_word_embeddings=False, num_experts=8, num_experts_per_tok=2,
                       moe_intermediate_size=32, norm_topk_prob=True, decoder_sparse_step=1,
                       mlp_only_layers=[])),
    # Qwen3.5 dense hybrid.
    "qwen3_5": (Qwen3_5TextConfig, Qwen3_5ForCausalLM, dict(HYBRID, rope_parameters=MROPE)),
    # Qwen3.5-MoE: the same hybrid stack, MLPs replaced by 8 experts (2 per token, always
    # renormalized) plus a sigmoid-gated shared expert.
    "qwen3_5_moe": (Qwen3_5MoeTextConfig, Qwen3_5MoeForCausalLM,
                    dict(HYBRID, rope_parameters=MROPE, num_experts=8, num_experts_per_tok=2,
                         moe_intermediate_size=32, shared_expert_intermediate_size=48)),
    # Qwen3-Next: the Qwen3.5-MoE stack with fused, per-key-head-grouped projections
    # (in_proj_qkvz, in_proj_ba) and GGUFs without the value-head reorder.
    "qwen3_next": (Qwen3NextConfig, Qwen3NextForCausalLM,
                   dict(HYBRID, rope_parameters={"rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                                 "rope_type": "default"},
                        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                        shared_expert_intermediate_size=48, norm_topk_prob=True,
                        decoder_sparse_step=1, mlp_only_layers=[])),
}
ARCH = {"llama": "llama", "gemma3": "gemma3", "qwen3_moe": "qwen3moe", "qwen3_5": "qwen35",
        "qwen3_5_moe": "qwen35moe", "qwen3_next": "qwen3next"}
NO_GGUF = set()


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.5 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                # Gemma multiplies embeddings by sqrt(hidden); keep its residual stream at unit scale.
                scale = model.config.hidden_size ** -0.5 if model.config.model_type.startswith("gemma") else 1.0
                p.copy_(torch.randn(p.shape, generator=g) * scale)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * (1.5 / p.shape[-1] ** 0.5))


def greedy(model, prompt, n):
    ids = list(prompt)
    margins = []
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([ids])).logits[0, -1]
            top2 = torch.topk(logits, 2).values
            margins.append(float(top2[0] - top2[1]))
            ids.append(int(torch.argmax(logits)))
    return ids[len(prompt):], min(margins)


def gguf_writer_with_common_meta(path, arch, cfg):
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"bw24 golden {arch}")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    return w


def add_expert_meta(w, cfg, shared=False):
    w.add_expert_count(cfg.num_experts)
    w.add_expert_used_count(cfg.num_experts_per_tok)
    w.add_expert_feed_forward_length(cfg.moe_intermediate_size)
    if shared:
        w.add_expert_shared_feed_forward_length(cfg.shared_expert_intermediate_size)


def expert_tensors(hf_name, data):
    """transformers' fused expert stacks as llama.cpp's 3-D tensors: gate_up_proj [n_expert, 2F, E]
    (gate rows, then up rows) -> ffn_gate_exps + ffn_up_exps; down_proj [n_expert, E, F] as is."""
    blk = f"blk.{hf_name.split('.')[2]}."
    if hf_name.endswith("gate_up_proj"):
        f = data.shape[1] // 2
        return {blk + "ffn_gate_exps.weight": np.ascontiguousarray(data[:, :f, :]),
                blk + "ffn_up_exps.weight": np.ascontiguousarray(data[:, f:, :])}
    return {blk + "ffn_down_exps.weight": data}


def llama_permute(w, n_head):
    # convert_hf_to_gguf.py LlamaModel.permute: half-split rows -> adjacent pairs per head.
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(path, arch, cfg, state):
    w = gguf_writer_with_common_meta(path, arch, cfg)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    rp = getattr(cfg, "rope_parameters", None) or {}
    theta = getattr(cfg, "rope_theta", None) or rp.get("rope_theta") or rp["full_attention"]["rope_theta"]
    w.add_rope_freq_base(theta)
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    if arch == "qwen3moe":
        add_expert_meta(w, cfg)
    if arch in ("qwen3", "gemma3", "qwen3moe"):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch == "gemma3":
        w.add_sliding_window(cfg.sliding_window)
    w.add_rope_dimension_count(head_dim)
    w.add_bos_token_id(cfg.bos_token_id)
    w.add_eos_token_id(cfg.eos_token_id)
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm.weight": "attn_norm.weight",
        "post_attention_layernorm.weight": "ffn_norm.weight",
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.o_proj.weight": "attn_output.weight",
        "self_attn.q_norm.weight": "attn_q_norm.weight",
        "self_attn.k_norm.weight": "attn_k_norm.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
        "mlp.gate.weight": "ffn_gate_inp.weight",
    }
    if arch == "gemma3":  # Gemma names norms by position (convert_hf_to_gguf.py Gemma3Model)
        per_layer.update({"post_attention_layernorm.weight": "post_attention_norm.weight",
                          "pre_feedforward_layernorm.weight": "ffn_norm.weight",
                          "post_feedforward_layernorm.weight": "post_ffw_norm.weight"})
    for hf_name, t in state.items():
        if hf_name == "lm_head.weight" and getattr(cfg, "tie_word_embeddings", False):
            continue
        if ".mlp.experts." in hf_name:
            for name, data in expert_tensors(hf_name, t.detach().float().numpy().copy()).items():
                w.add_tensor(name, data)
            continue
        if hf_name in names:
            name = names[hf_name]
        else:
            parts = hf_name.split(".")
            name = f"blk.{parts[2]}." + per_layer[".".join(parts[3:])]
        data = t.detach().float().numpy().copy()
        if arch == "gemma3" and name.endswith("norm.weight"):
            data = data + 1.0  # llama.cpp folds Gemma's (1 + w) into the stored weight
        if arch == "llama" and name.endswith("attn_q.weight"):
            data = llama_permute(data, cfg.num_attention_heads)
        if arch == "llama" and name.endswith("attn_k.weight"):
            data = llama_permute(data, cfg.num_key_value_heads)
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def qwen35_v_order(cfg):
    """formats.md §1.5 item 6: GGUF value head j*Hk + g holds HF value head g*r + j."""
    hk, hv = cfg.linear_num_key_heads, cfg.linear_num_value_heads
    r = hv // hk
    return [g * r + j for j in range(r) for g in range(hk)]


def qwen35_gguf_tensors(cfg, state, arch="qwen35"):
    """The qwen35 GGUF tensors with llama.cpp's transforms (formats.md §1.5): zero-centered norms
    +1 (not the delta net's gated norm), ssm_a = -exp(A_log), conv1d squeezed, value heads
    reordered (tiled) wherever they appear."""
    # Qwen3-Next files keep HF's value-head order (formats.md §1.5 item 6).
    order = qwen35_v_order(cfg) if arch != "qwen3next" else list(range(cfg.linear_num_value_heads))
    kd = cfg.linear_num_key_heads * cfg.linear_key_head_dim
    dv = cfg.linear_value_head_dim
    hk, dk = cfg.linear_num_key_heads, cfg.linear_key_head_dim
    r = cfg.linear_num_value_heads // hk
    rows_v = np.concatenate([np.arange(h * dv, (h + 1) * dv) for h in order])  # V rows, new order
    names = {"input_layernorm.weight": "attn_norm.weight",
             "post_attention_layernorm.weight": "post_attention_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
             "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight",
             "linear_attn.in_proj_qkv.weight": "attn_qkv.weight", "linear_attn.in_proj_z.weight": "attn_gate.weight",
             "linear_attn.in_proj_b.weight": "ssm_beta.weight", "linear_attn.in_proj_a.weight": "ssm_alpha.weight",
             "linear_attn.conv1d.weight": "ssm_conv1d.weight", "linear_attn.dt_bias": "ssm_dt.bias",
             "linear_attn.A_log": "ssm_a", "linear_attn.norm.weight": "ssm_norm.weight",
             "linear_attn.out_proj.weight": "ssm_out.weight",
             "mlp.gate.weight": "ffn_gate_inp.weight",
             "mlp.shared_expert.gate_proj.weight": "ffn_gate_shexp.weight",
             "mlp.shared_expert.up_proj.weight": "ffn_up_shexp.weight",
             "mlp.shared_expert.down_proj.weight": "ffn_down_shexp.weight",
             "mlp.shared_expert_gate.weight": "ffn_gate_inp_shexp.weight"}
    out = {}
    for hf_name, t in state.items():
        data = t.detach().float().numpy().copy()
        if ".mlp.experts." in hf_name:
            out.update(expert_tensors(hf_name, data))
            continue
        if hf_name.endswith("mlp.shared_expert_gate.weight"):
            data = data.reshape(-1)  # [1, E] -> {E}
        if hf_name.endswith("linear_attn.in_proj_qkvz.weight"):  # per key head [q | k | v (r dv) | z (r dv)]
            blk = f"blk.{hf_name.split('.')[2]}."
            g = data.reshape(hk, 2 * dk + 2 * r * dv, -1)
            out[blk + "attn_qkv.weight"] = np.ascontiguousarray(np.concatenate(
                [g[:, :dk].reshape(-1, g.shape[-1]), g[:, dk:2 * dk].reshape(-1, g.shape[-1]),
                 g[:, 2 * dk:2 * dk + r * dv].reshape(-1, g.shape[-1])]))
            out[blk + "attn_gate.weight"] = np.ascontiguousarray(g[:, 2 * dk + r * dv:].reshape(-1, g.shape[-1]))
            continue
        if hf_name.endswith("linear_attn.in_proj_ba.weight"):  # kept fused, as llama.cpp's converter does
            out[f"blk.{hf_name.split('.')[2]}.ssm_ba.weight"] = data
            continue
        if hf_name in ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"):
            name = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
                    "lm_head.weight": "output.weight"}[hf_name]
        else:
            parts = hf_name.split(".")
            rest = ".".join(parts[3:])
            name = f"blk.{parts[2]}." + names[rest]
            if rest in ("linear_attn.in_proj_qkv.weight", "linear_attn.conv1d.weight"):
                data = np.concatenate([data[:2 * kd], data[2 * kd:][rows_v]])
            elif rest == "linear_attn.in_proj_z.weight":
                data = data[rows_v]
            elif rest in ("linear_attn.in_proj_b.weight", "linear_attn.in_proj_a.weight", "linear_attn.dt_bias"):
                data = data[order]
            elif rest == "linear_attn.A_log":
                data = -np.exp(data[order])
            elif rest == "linear_attn.out_proj.weight":
                data = data[:, rows_v]
            if rest == "linear_attn.conv1d.weight":
                data = data.reshape(data.shape[0], data.shape[2])  # [C, 1, K] -> [C, K]
        if name.endswith("norm.weight") and name != f"blk.{name.split('.')[1]}.ssm_norm.weight":
            data = data + 1.0
        out[name] = np.ascontiguousarray(data)
    return out


def write_gguf_qwen35(path, cfg, state, vocab=False, arch="qwen35"):
    w = gguf_writer_with_common_meta(path, arch, cfg)
    w.add_key_length(cfg.head_dim)
    w.add_value_length(cfg.head_dim)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    rp = cfg.rope_parameters
    w.add_rope_freq_base(rp["rope_theta"])
    w.add_rope_dimension_count(int(cfg.head_dim * rp["partial_rotary_factor"]))
    if "mrope_section" in rp:
        w.add_rope_dimension_sections(list(rp["mrope_section"]) + [0] * (4 - len(rp["mrope_section"])))
    w.add_ssm_conv_kernel(cfg.linear_conv_kernel_dim)
    w.add_ssm_state_size(cfg.linear_key_head_dim)
    w.add_ssm_group_count(cfg.linear_num_key_heads)
    w.add_ssm_time_step_rank(cfg.linear_num_value_heads)
    w.add_ssm_inner_size(cfg.linear_num_value_heads * cfg.linear_value_head_dim)
    w.add_full_attention_interval(4)
    if arch in ("qwen35moe", "qwen3next"):
        add_expert_meta(w, cfg, shared=True)
    w.add_bos_token_id(cfg.bos_token_id)
    w.add_eos_token_id(cfg.eos_token_id)
    if vocab:  # a placeholder vocabulary, for llama.cpp (which will not load a file without one)
        w.add_tokenizer_model("llama")
        w.add_token_list(["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(253)])
        w.add_token_scores([0.0] * 256)
        w.add_token_types([2, 3, 3] + [6] * 253)
    for name, data in qwen35_gguf_tensors(cfg, state, arch).items():
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_fused(out, model):
    """fused/: the same MoE checkpoint in transformers 5's in-memory layout (mlp.experts.gate_up_proj
    [n_expert, 2F, E], mlp.experts.down_proj [n_expert, E, F]), which save_pretrained converts back
    to per-expert tensors; some checkpoints ship it as is."""
    from safetensors.torch import save_file
    d = os.path.join(out, "fused")
    os.makedirs(d, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "config.json")) as f, open(os.path.join(d, "config.json"), "w") as g:
        g.write(f.read())


def check_moe_gguf(path, state):
    """Read the GGUF back and undo the expert transform: every expert equals the HF tensor."""
    r = gguf.GGUFReader(path)
    t = {x.name: np.asarray(x.data) for x in r.tensors}
    n = 0
    for hf_name, v in state.items():
        if ".mlp.experts." not in hf_name and not hf_name.endswith("mlp.gate.weight"):
            continue
        blk = f"blk.{hf_name.split('.')[2]}."
        v = v.detach().float().numpy()
        if hf_name.endswith("gate_up_proj"):
            back = np.concatenate([t[blk + "ffn_gate_exps.weight"], t[blk + "ffn_up_exps.weight"]], axis=1)
        elif hf_name.endswith("down_proj"):
            back = t[blk + "ffn_down_exps.weight"]
        else:
            back = t[blk + "ffn_gate_inp.weight"]
        assert back.shape == v.shape and np.array_equal(back, v), hf_name
        n += 1
    print(f"  {path}: {n} MoE tensors read back equal to the HF ones")


def main():
    torch.set_num_threads(2)
    for i, (name, (cfg_cls, model_cls, kwargs)) in enumerate(MODELS.items()):
        out = os.path.join(OUT, name)
        os.makedirs(out, exist_ok=True)
        cfg = cfg_cls(**kwargs)
        torch.manual_seed(i)
        model = model_cls(cfg).float().eval()
        randomize(model, 1000 + i)
        model.save_pretrained(out, safe_serialization=True)
        with torch.no_grad():
            logits = model(torch.tensor([PROMPT])).logits[0].float().numpy()
        logits.astype("<f4").tofile(os.path.join(out, "logits.f32"))
        ids, margin = greedy(model, PROMPT, N_GREEDY)
        arch = ARCH.get(name, "qwen3")
        if arch in ("qwen35", "qwen35moe", "qwen3next"):
            write_gguf_qwen35(os.path.join(out, "model.gguf"), cfg, model.state_dict(), arch=arch)
        elif name not in NO_GGUF:
            write_gguf(os.path.join(out, "model.gguf"), arch, cfg, model.state_dict())
        if arch == "qwen3moe":
            check_moe_gguf(os.path.join(out, "model.gguf"), model.state_dict())
            write_fused(out, model)
        for extra in ("generation_config.json",):
            p = os.path.join(out, extra)
            if os.path.exists(p):
                os.remove(p)
        golden = {"model": name, "arch": arch, "prompt_ids": PROMPT, "n_vocab": cfg.vocab_size,
                  "greedy_ids": ids, "min_top2_margin": margin,
                  "transformers": __import__("transformers").__version__,
                  "torch": torch.__version__}
        with open(os.path.join(out, "golden.json"), "w") as f:
            json.dump(golden, f, indent=1)
        print(f"{name}: greedy {ids[:8]}... min margin {margin:.4f}")


if __name__ == "__main__":
    sys.exit(main())
