#!/usr/bin/env python3
"""bw24 vs llama.cpp on the same synthetic bytes (bw24-synth), CPU, greedy.

For each SHAPE:QUANT: bw24-synth writes the GGUF, llama.cpp (llama-cpp-python) and bw24-generate
each continue a fixed prompt greedily; the script prints both id lists, the first step where they
differ, and bw24's top-2 logit margin there (teacher-forced through --dump-logits), so a divergence
can be told apart from a bug: llama.cpp rounds activations to 8 bits on the CPU, which flips
near-ties.

Where they differ, llama.cpp also runs the same weights dequantized to F32 (f32 activations).

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


def dequantized_copy(src, dst, arch):
    """The same model with every tensor dequantized to F32 (the gguf package's reference dequant):
    llama.cpp then runs f32 activations too, so what remains between the engines is model math."""
    import gguf
    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, arch)
    for f in r.fields.values():
        if f.name.startswith("GGUF.") or f.name == "general.architecture":
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            et = f.types[1]
            if et == gguf.GGUFValueType.STRING:
                w.add_array(f.name, [bytes(f.parts[i]).decode() for i in f.data])
            else:
                w.add_key_value(f.name, [f.parts[i].tolist()[0] for i in f.data], t, sub_type=et)
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(f.name, bytes(f.parts[f.data[0]]).decode())
        else:
            w.add_key_value(f.name, f.parts[f.data[0]].tolist()[0], t)
    for x in r.tensors:
        data = gguf.quants.dequantize(x.data, x.tensor_type).astype(np.float32)
        w.add_tensor(x.name, data.reshape([int(d) for d in reversed(x.shape.tolist())]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_greedy(path):
    llm = llama_cpp.Llama(model_path=path, n_ctx=256, verbose=False, n_threads=2)
    ids = []
    for tk in llm.generate(PROMPT, temp=0.0):
        ids.append(tk)
        if len(ids) == N:
            break
    return ids, llm


def main():
    build = sys.argv[1]
    cases = sys.argv[2:] or ["tiny-qwen3:Q4_K_M", "tiny-qwen3moe:Q4_K_M", "tiny-qwen3moe:Q8_0"]
    tmp = tempfile.mkdtemp()
    for case in cases:
        shape, quant = case.split(":")
        path = os.path.join(tmp, f"{shape}-{quant}.gguf")
        subprocess.run([os.path.join(build, "bw24-synth"), shape, quant, path], check=True, capture_output=True)
        ref, llm = llama_greedy(path)
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
        if first is not None and quant not in ("F16", "BF16"):
            # Same weights in F32: if llama.cpp now matches bw24, the gap was its 8-bit activations.
            arch = next(f for f in llm.metadata.items() if f[0] == "general.architecture")[1]
            deq = os.path.join(tmp, f"{shape}-{quant}-f32.gguf")
            dequantized_copy(path, deq, arch)
            ref32, _ = llama_greedy(deq)
            same = next((i for i in range(N) if ids[i] != ref32[i]), N)
            print(f"  llama.cpp on the same weights dequantized to F32 matches bw24 for {same}/{N} steps")


if __name__ == "__main__":
    sys.exit(main())
