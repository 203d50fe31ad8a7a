#!/usr/bin/env python3
"""Reference data from llama.cpp (llama-cpp-python, CPU) for the differential test on real models.

For each model in models/ (tools/fetch-models.sh) writes tests/data/llamacpp/<name>.json + .bin:
  - the tokenization of TEXT (BOS as the model asks, specials not parsed), cut to 256 tokens
  - teacher-forced next-token distributions over those 256 tokens: llama.cpp's top-128 token ids
    and log-probabilities per position plus the log of the remaining probability mass
    (.bin: int32 ids[256][128], float32 logp[256][128], float32 log_rest[256])
  - a 64-token greedy continuation of the first 32 tokens, with llama.cpp's top-2 logit margin
    at every step (the test tolerates divergence only after a step whose margin is < 0.1)
Run: python tests/reference/make_llamacpp_reference.py   (needs llama-cpp-python, numpy)
"""
import json
import os
import sys

import numpy as np
from llama_cpp import Llama

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "llamacpp")
MODELS = {"smollm2": "models/SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3": "models/gemma-3-270m-q4_k_m.gguf"}
N_TOKENS, TOP_K, PREFIX, N_GREEDY = 256, 128, 32, 64

TEXT = (
    "The old lighthouse stood at the edge of the cliff, its white paint peeling after decades of salt "
    "and wind. Every evening, Mara climbed the spiral staircase, one hundred and twelve steps, to light "
    "the lamp that warned ships away from the rocks below. Her grandfather had done the same work for "
    "forty years, and his father before him. The village below depended on the light, though few people "
    "ever thought about it. Fishermen left before dawn and returned after dusk, guided home by the steady "
    "beam that swept across the water every nine seconds.\n\n"
    "One winter night, a storm rolled in from the north. The waves rose higher than anyone could remember, "
    "and the rain fell so hard that the windows of the lamp room rattled in their frames. Mara checked the "
    "fuel, trimmed the wick, and polished the great glass lens until it gleamed. At midnight the power "
    "failed in the village, and every house went dark. Only the lighthouse remained, a single point of "
    "light in an ocean of black.\n\n"
    "Near two in the morning she saw it: a small boat, tossed like a leaf, drifting toward the rocks. She "
    "grabbed the signal lamp and flashed a warning, three short, three long, three short. The boat turned, "
    "slowly at first, then with purpose, and followed the beam into the safety of the harbor. In the morning "
    "the whole village came to thank her, but Mara only smiled and said that the light had done the work. "
    "Numbers like 3.14159, 2048 and 1,000,000 appear too, as do symbols: @, #, %, & and (parentheses)."
)


def log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.max()
    return x - (m + np.log(np.exp(x - m).sum()))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, rel in MODELS.items():
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            print(f"skip {name}: {path} missing (run tools/fetch-models.sh)")
            continue
        # llama.cpp's defaults (f16 KV cache); the test runs bw24 with an f16 KV cache too.
        llm = Llama(model_path=path, n_ctx=512, logits_all=True, verbose=False, n_threads=2, seed=0)
        ids = llm.tokenize(TEXT.encode("utf-8"), add_bos=True, special=False)
        assert len(ids) >= N_TOKENS, (name, len(ids))
        full_ids = list(ids)
        ids = ids[:N_TOKENS]
        llm.reset()
        llm.eval(ids)
        scores = np.array(llm.scores[:N_TOKENS], dtype=np.float64)
        top_ids = np.zeros((N_TOKENS, TOP_K), dtype="<i4")
        top_lp = np.zeros((N_TOKENS, TOP_K), dtype="<f4")
        log_rest = np.zeros(N_TOKENS, dtype="<f4")
        argmax = []
        for t in range(N_TOKENS):
            lp = log_softmax(scores[t])
            order = np.argsort(-lp, kind="stable")[:TOP_K]
            top_ids[t] = order
            top_lp[t] = lp[order]
            rest = max(1e-30, 1.0 - np.exp(lp[order]).sum())
            log_rest[t] = np.log(rest)
            argmax.append(int(order[0]))
        # Greedy continuation of the first PREFIX tokens, with margins.
        llm.reset()
        seq = list(ids[:PREFIX])
        llm.eval(seq)
        greedy, margins = [], []
        for _ in range(N_GREEDY):
            logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float64)
            top2 = np.sort(logits)[-2:]
            margins.append(float(top2[1] - top2[0]))
            nxt = int(np.argmax(logits))
            greedy.append(nxt)
            llm.eval([nxt])
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(top_ids.tobytes())
            f.write(top_lp.tobytes())
            f.write(log_rest.tobytes())
        meta = {"model": rel, "text": TEXT, "text_ids": full_ids, "ids": ids, "top_k": TOP_K,
                "argmax": argmax, "prefix": PREFIX, "greedy": greedy, "greedy_margins": margins,
                "llama_cpp_python": __import__("llama_cpp").__version__}
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(meta, f, indent=0)
        print(f"{name}: {len(full_ids)} text tokens, greedy {greedy[:8]}..., min margin {min(margins):.3f}")


if __name__ == "__main__":
    sys.exit(main())
