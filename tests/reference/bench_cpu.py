#!/usr/bin/env python3
"""CPU speed of bw24's reference backend next to llama.cpp (llama-cpp-python, same files, same
thread count) for docs/performance.md. Decode: 64 greedy tokens after a short prompt; prefill: the
prompt's tokens/s. Medians of 3 runs. Run after building: python tests/reference/bench_cpu.py"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GEN = os.path.join(ROOT, "build", "bw24-generate")
THREADS = os.cpu_count()
CASES = [
    ("stories260K (F32)", os.path.join(ROOT, "..", "shared", "models", "stories260K.gguf"), "1,403,407,261,378", True),
    ("qwen3 golden (F32, tiny)", os.path.join(ROOT, "tests", "data", "golden", "qwen3", "model.gguf"),
     "1,17,42,99,3,200,77,5,128,64", False),
    ("SmolLM2-135M-Instruct Q4_1", os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"), None, True),
    ("Gemma-3-270M Q4_K_M", os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"), None, True),
]
PROMPT = "The old lighthouse stood at the edge of the cliff, its white paint peeling after decades of salt and wind."
N = 64


def bw24(path, ids):
    args = [GEN, "-m", path, "-n", str(N), "--json"]
    args += ["--prompt-ids", ids] if ids else ["-p", PROMPT]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    j = json.loads(out)
    return j["prefill_tok_s"], j["decode_tok_s"], len(j["ids"])


def llamacpp(path, ids):
    from llama_cpp import Llama
    llm = Llama(model_path=path, n_ctx=512, verbose=False, n_threads=THREADS, n_threads_batch=THREADS)
    toks = [int(x) for x in ids.split(",")] if ids else llm.tokenize(PROMPT.encode(), add_bos=True)
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(toks)
    t1 = time.perf_counter()
    n = 0
    for _ in range(N):
        logits = llm.scores[llm.n_tokens - 1]
        tok = int(logits.argmax())
        llm.eval([tok])
        n += 1
    t2 = time.perf_counter()
    return len(toks) / (t1 - t0), n / (t2 - t1), n


def main():
    print(f"threads: {THREADS}")
    print("| model | bw24 prefill tok/s | bw24 decode tok/s | llama.cpp prefill tok/s | llama.cpp decode tok/s |")
    print("|---|---|---|---|---|")
    for name, path, ids, with_llama in CASES:
        if not os.path.exists(path):
            print(f"| {name} | (missing) | | | |")
            continue
        runs = [bw24(path, ids) for _ in range(3)]
        bp, bd = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        lp = ld = float("nan")
        if with_llama:
            lr = [llamacpp(path, ids) for _ in range(3)]
            lp, ld = statistics.median(r[0] for r in lr), statistics.median(r[1] for r in lr)
        print(f"| {name} | {bp:.1f} | {bd:.1f} | {lp:.1f} | {ld:.1f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
