#!/usr/bin/env python3
"""Diagnosis for the llama.cpp differential: run transformers on the same GGUF (dequantized to fp32)
over the first 128 tokens of the differential text and compare its logits with bw24's CPU
reference and its argmax with llama.cpp's (tests/data/llamacpp/<name>.json).
Run after building: python tests/reference/compare_transformers_gguf.py smollm2|gemma3
(needs torch, transformers, gguf, accelerate)."""
import json
import os
import subprocess
import sys

import numpy as np
import torch
from transformers import AutoModelForCausalLM

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main(name):
    meta = json.load(open(os.path.join(ROOT, "tests", "data", "llamacpp", name + ".json")))
    ids = meta["ids"][:128]
    path = os.path.join(ROOT, meta["model"])
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                                 torch_dtype=torch.float32)
    with torch.no_grad():
        hf = model(torch.tensor([ids])).logits[0].numpy()
    subprocess.run([os.path.join(ROOT, "build", "bw24-generate"), "-m", path, "--prompt-ids",
                    ",".join(map(str, ids)), "-n", "1", "--dump-logits", "/tmp/bw24_logits.f32"],
                   check=True, capture_output=True)
    bw = np.fromfile("/tmp/bw24_logits.f32", dtype="<f4").reshape(len(ids), -1)
    v = min(hf.shape[1], bw.shape[1])
    hf, bw = hf[:, :v], bw[:, :v]
    lc = np.array(meta["argmax"][:len(ids)])
    print(f"{name}: bw24 vs transformers(GGUF->fp32): max rel logit err "
          f"{np.abs(hf - bw).max() / np.abs(hf).max():.2e}, argmax agreement {(hf.argmax(1) == bw.argmax(1)).mean():.4f}; "
          f"llama.cpp argmax agreement: bw24 {(bw.argmax(1) == lc).mean():.4f}, transformers {(hf.argmax(1) == lc).mean():.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
