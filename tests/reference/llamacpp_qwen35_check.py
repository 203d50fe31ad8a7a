#!/usr/bin/env python3
"""Proof of the qwen35 / qwen35moe GGUF transforms (formats.md §1.5): llama.cpp runs the golden's GGUF tensors
(tests/data/golden/qwen3_5/model.gguf, written by make_goldens.py) and must reproduce transformers'
logits for the golden prompt. The committed file has no vocabulary, which llama.cpp requires, so
this script writes the same tensors again with a placeholder one into a temporary file.

Run: python tests/reference/llamacpp_qwen35_check.py   (needs llama-cpp-python, torch, transformers, gguf)
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch
import llama_cpp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_goldens as mg  # noqa: E402


def check(name, arch):
    i = list(mg.MODELS).index(name)
    cfg_cls, model_cls, kwargs = mg.MODELS[name]
    cfg = cfg_cls(**kwargs)
    torch.manual_seed(i)
    model = model_cls(cfg).float().eval()
    mg.randomize(model, 1000 + i)
    gold_dir = os.path.join(mg.OUT, name)
    golden = json.load(open(os.path.join(gold_dir, "golden.json")))
    ref = np.fromfile(os.path.join(gold_dir, "logits.f32"), dtype="<f4").reshape(len(golden["prompt_ids"]), -1)
    path = os.path.join(tempfile.mkdtemp(), "qwen35-vocab.gguf")
    mg.write_gguf_qwen35(path, cfg, model.state_dict(), vocab=True, arch=arch)
    llm = llama_cpp.Llama(model_path=path, n_ctx=256, logits_all=True, verbose=False, n_threads=2)
    llm.eval(golden["prompt_ids"])
    got = np.array(llm.scores[:len(golden["prompt_ids"])])
    rel = np.abs(got - ref).max() / np.abs(ref).max()
    same = int((got.argmax(-1) == ref.argmax(-1)).sum())
    print(f"llama.cpp on the {arch} GGUF vs transformers: max rel logit err {rel:.2e}, "
          f"argmax {same}/{len(ref)} positions")
    return rel < 1e-2 and same == len(ref)


def main():
    ok = [check("qwen3_5", "qwen35"), check("qwen3_5_moe", "qwen35moe"), check("qwen3_next", "qwen3next")]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
