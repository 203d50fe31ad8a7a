#!/usr/bin/env python3
"""What a quantized KV cache costs, in bw24 and in llama.cpp, on the same real models.

For each cache pair (K type / V type) both engines read the differential test's 256 reference
tokens teacher-forced (tests/data/llamacpp/<name>.json): bw24's CPU reference through
`bw24-generate --kv-k K --kv-v V --dump-logits`, llama.cpp (llama-cpp-python, CPU, flash attention on,
which its quantized V cache needs) with type_k / type_v, twice: as it ships, and with
LLAMA_ATTN_ROT_DISABLE=1. (llama.cpp rotates Q and K by a Walsh-Hadamard matrix, and V in blocks of
64, whenever a cache type is quantized and the head size is a multiple of 64; the rotation spreads a
row's outlier channels over the block, so that its scale fits the rest.) bw24 runs twice as well:
as it ships, and with the model option kv_rotate=1 (the same sizes, lib/kv/kv_cache.h). Each run is
compared with the same engine's f16 cache run: top-1 agreement and mean KL(f16 || pair) over the
positions. If bw24's q8_0 / q4_0 blocks were wrong, its loss would stand out from llama.cpp's on
the same pair and rotation. Then the engines decode a chat question greedily from the same prompt
ids with each pair, and the texts are printed side by side.

Run: python tests/reference/llamacpp_kv_check.py BUILD_DIR   (needs llama-cpp-python, numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from llama_cpp import Llama

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_llamacpp_reference import MODELS, ROOT  # noqa: E402

GGML_TYPE = {"f16": 1, "q4_0": 2, "q8_0": 8}  # ggml.h's enum ggml_type
PAIRS = [("f16", "f16"), ("q8_0", "q8_0"), ("q8_0", "q4_0"), ("q4_0", "q4_0")]
QUESTION = "What is the capital of France?"
N_GEN = 24


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def versus(base, other):
    """Top-1 agreement (%) and mean KL(base || other) of two [n][vocab] logit arrays."""
    lp, lq = log_softmax(base.astype(np.float64)), log_softmax(other.astype(np.float64))
    kl = (np.exp(lp) * (lp - lq)).sum(-1).mean()
    return np.mean(base.argmax(-1) == other.argmax(-1)) * 100, kl


def bw24(build, path, args):
    return subprocess.run([os.path.join(build, "bw24-generate"), "-m", path] + args, check=True,
                          capture_output=True, text=True).stdout


def main():
    build = sys.argv[1]
    tmp = tempfile.mkdtemp()
    for name, rel in MODELS.items():
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            print(f"SKIPPED {name}: {rel} missing (bash tools/fetch-models.sh)")
            continue
        ids = json.load(open(os.path.join(ROOT, "tests", "data", "llamacpp", f"{name}.json")))["ids"]
        chat_ids = json.loads(bw24(build, path, ["-p", QUESTION, "--chat", "--tokenize-only", "--json"]))["ids"]
        logits, texts = {}, {}
        for k, v in PAIRS:
            bw, bw_text = {}, {}
            for rot in (True, False):
                kv_args = ["--kv-k", k, "--kv-v", v, "--option", f"kv_rotate={int(rot)}"]
                dump = os.path.join(tmp, f"{name}-{k}-{v}.f32")
                bw24(build, path, ["--prompt-ids", ",".join(map(str, ids)), "-n", "1", "--dump-logits", dump] + kv_args)
                bw[rot] = np.fromfile(dump, dtype=np.float32).reshape(len(ids), -1)
                os.remove(dump)
                bw_text[rot] = json.loads(bw24(build, path, ["--prompt-ids", ",".join(map(str, chat_ids)),
                                                             "-n", str(N_GEN), "--json"] + kv_args))["text"]
            lc, lc_text = {}, {}
            for rot in (True, False):  # llama.cpp reads the switch when it makes a context
                os.environ["LLAMA_ATTN_ROT_DISABLE"] = "0" if rot else "1"
                llm = Llama(model_path=path, n_ctx=512, logits_all=True, verbose=False, n_threads=2, seed=0,
                            flash_attn=True, type_k=GGML_TYPE[k], type_v=GGML_TYPE[v])
                llm.eval(ids)
                lc[rot] = np.array(llm.scores[:len(ids)], dtype=np.float32)
                llm.reset()
                out = []
                for tok in llm.generate(chat_ids, temp=0.0, top_k=1):
                    if llm.token_eos() == tok or len(out) == N_GEN:
                        break
                    out.append(tok)
                lc_text[rot] = llm.detokenize(out).decode("utf-8", "replace")
                del llm
            logits[k, v] = (bw, lc)
            texts[k, v] = (bw_text, lc_text)
        print(f"{name}: {len(ids)} teacher-forced tokens, each run against its engine's f16 cache run "
              "(top-1 agreement, mean KL)")
        print("| K / V | bw24 | bw24, kv_rotate=1 | llama.cpp, not rotated | llama.cpp, rotated (its default) |"
              " top-1 bw24 vs llama.cpp, not rotated / rotated |")
        print("|---|---|---|---|---|---|")
        bw0, lc0 = logits["f16", "f16"]
        for k, v in PAIRS:
            bw, lc = logits[k, v]
            cells = [versus(bw0[rot], bw[rot]) for rot in (False, True)] + \
                    [versus(lc0[rot], lc[rot]) for rot in (False, True)]
            cross = [np.mean(bw[rot].argmax(-1) == lc[rot].argmax(-1)) * 100 for rot in (False, True)]
            print(f"| {k} / {v} | " + " | ".join(f"{t:.1f} %, {kl:.4f}" for t, kl in cells) +
                  f" | {cross[0]:.1f} % / {cross[1]:.1f} % |")
        print(f"{name}: greedy {N_GEN} tokens after the chat prompt '{QUESTION}'")
        for k, v in PAIRS:
            bt, lt = texts[k, v]
            print(f"  {k} / {v}")
            for rot in (False, True):
                tag = "rotated" if rot else "not rotated"
                print(f"    bw24, {tag + ':':13}      {bt[rot]!r}\n    llama.cpp, {tag + ':':13} {lt[rot]!r}")

if __name__ == "__main__":
    sys.exit(main())
