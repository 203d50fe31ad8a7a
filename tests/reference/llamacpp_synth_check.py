#!/usr/bin/env python3
"""bw24 vs llama.cpp on the same synthetic bytes (bw24-synth), CPU, greedy.

For each SHAPE:QUANT: bw24-synth writes the GGUF, llama.cpp (llama-cpp-python) and bw24-generate
each continue a fixed prompt greedily; the script prints both id lists, the first step where they
differ, and bw24's top-2 logit margin there (teacher-forced through --dump-logits), so a divergence
can be told apart from a bug: llama.cpp rounds activations to 8 bits on the CPU, which flips
near-ties.

Run: python tests/reference/llamacpp_synth_check.py BUILD_DIR [SHAPE:QUANT ...]
     (default tiny-qwen3:Q4_K_M tiny-qwen3moe:Q4_K_M tiny-qwen3moe:Q8_0; needs llama-cpp-python, numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import llama_cpp

PROMPT = [1, 300, 7, 1999, 42]
N = 16


def main():
    build = sys.argv[1]
    cases = sys.argv[2:] or ["tiny-qwen3:Q4_K_M", "tiny-qwen3moe:Q4_K_M", "tiny-qwen3moe:Q8_0"]
    tmp = tempfile.mkdtemp()
    for case in cases:
        shape, quant = case.split(":")
        path = os.path.join(tmp, f"{shape}-{quant}.gguf")
        subprocess.run([os.path.join(build, "bw24-synth"), shape, quant, path], check=True, capture_output=True)
        llm = llama_cpp.Llama(model_path=path, n_ctx=256, verbose=False, n_threads=2)
        ref = []
        for tk in llm.generate(PROMPT, temp=0.0):
            ref.append(tk)
            if len(ref) == N:
                break
        out = subprocess.run([os.path.join(build, "bw24-generate"), "-m", path, "--prompt-ids",
                              ",".join(map(str, PROMPT)), "-n", str(N), "--json"],
                             check=True, capture_output=True, text=True)
        ids = json.loads(out.stdout)["ids"]
        first = next((i for i in range(N) if ids[i] != ref[i]), None)
        line = f"{case}: identical for {first if first is not None else N}/{N} steps"
        if first is not None:
            dump = os.path.join(tmp, "logits.f32")
            ctx = PROMPT + ids[:first]
            subprocess.run([os.path.join(build, "bw24-generate"), "-m", path, "--prompt-ids",
                            ",".join(map(str, ctx)), "-n", "1", "--dump-logits", dump],
                           check=True, capture_output=True)
            n_vocab = llm.n_vocab()
            lg = np.fromfile(dump, dtype=np.float32)[-n_vocab:]
            top = np.argsort(-lg)[:2]
            line += (f"; at step {first} bw24 picks {ids[first]}, llama.cpp {ref[first]} (bw24's rank-"
                     f"{int(np.sum(lg > lg[ref[first]])) + 1} choice), bw24 top-2 margin {lg[top[0]] - lg[top[1]]:.4f}"
                     f", logit std {lg.std():.3f}")
        print(line)
        print(f"  bw24      {ids}\n  llama.cpp {ref}")


if __name__ == "__main__":
    sys.exit(main())
