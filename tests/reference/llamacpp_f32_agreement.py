#!/usr/bin/env python3
"""Where the text issue's top-1 gap with llama.cpp comes from (docs/performance.md).

For the real models of the differential test: bw24's teacher-forced argmax over the 256 reference
tokens (bw24-generate --dump-logits) against (a) llama.cpp on the quantized file, as recorded in
tests/data/llamacpp/<name>.json, and (b) llama.cpp on the same weights dequantized to F32 (the
`gguf` package's reference dequant), where llama.cpp's activations stay f32 instead of being
rounded to 8 bits before each quantized matmul.

Run: python tests/reference/llamacpp_f32_agreement.py BUILD_DIR   (needs llama-cpp-python, gguf, numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf import GGUFReader
from llama_cpp import Llama

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llamacpp_synth_check import dequantized_copy  # noqa: E402
from make_llamacpp_reference import MODELS, ROOT  # noqa: E402


def main():
    build = sys.argv[1]
    tmp = tempfile.mkdtemp()
    for name, rel in MODELS.items():
        path = os.path.join(ROOT, rel)
        ref = json.load(open(os.path.join(ROOT, "tests", "data", "llamacpp", f"{name}.json")))
        ids = ref["ids"]
        dump = os.path.join(tmp, f"{name}.f32")
        subprocess.run([os.path.join(build, "bw24-generate"), "-m", path, "--prompt-ids", ",".join(map(str, ids)),
                        "-n", "1", "--dump-logits", dump], check=True, capture_output=True)
        bw = np.fromfile(dump, dtype=np.float32).reshape(len(ids), -1)
        bw_top = bw.argmax(-1)
        quant_top = np.array(ref["argmax"])
        deq = os.path.join(tmp, f"{name}-f32.gguf")
        arch = bytes(GGUFReader(path).fields["general.architecture"].parts[-1]).decode()
        dequantized_copy(path, deq, arch)
        llm = Llama(model_path=deq, n_ctx=512, logits_all=True, verbose=False, n_threads=2, seed=0)
        llm.eval(ids)
        f32_top = np.array(llm.scores[:len(ids)]).argmax(-1)
        n = len(ids)
        print(f"{name}: bw24 vs llama.cpp top-1 over {n} tokens: quantized file {np.mean(bw_top == quant_top) * 100:.1f} %, "
              f"same weights dequantized to F32 {np.mean(bw_top == f32_top) * 100:.1f} %; llama.cpp quantized vs its own "
              f"F32 run {np.mean(quant_top == f32_top) * 100:.1f} %")
        os.remove(deq)


if __name__ == "__main__":
    sys.exit(main())
