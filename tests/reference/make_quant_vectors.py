#!/usr/bin/env python3
"""Quant test vectors from the `gguf` package (PyPI), which carries llama.cpp's reference
dequantize/quantize code in numpy. Writes tests/data/quant/vectors.json:
  sizes:    block elems / bytes of every ggml type the package knows (checks lib/core/dtype.cpp)
  dequant:  per type, 4 random blocks (hex) and the package's f32 dequantization
  quantize: for Q8_0 and Q4_0, random floats and the package's quantized bytes (hex)
Random block bytes get their scale fields overwritten with sane fp16 values so the expected
floats are finite. Q8_K has no dequantizer in the package; its expected values are computed here
from the documented formula (x = d * q), marked "source": "formula".
Run: python tests/reference/make_quant_vectors.py
"""
import json
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants
from gguf.constants import GGML_QUANT_SIZES

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "quant", "vectors.json")
rng = np.random.default_rng(24)

# Offsets of fp16 scale fields inside one block (formats.md §2).
HALF_FIELDS = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "IQ4_NL": [0],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
    "IQ4_XS": [0],
}
N_BLOCKS = 4


def random_blocks(name):
    elems, nbytes = GGML_QUANT_SIZES[T[name]]
    raw = bytearray(rng.integers(0, 256, size=nbytes * N_BLOCKS, dtype=np.uint8).tobytes())
    for b in range(N_BLOCKS):
        base = b * nbytes
        for off in HALF_FIELDS.get(name, []):
            v = np.float16(rng.uniform(-2.0, 2.0) * 2.0 ** rng.integers(-6, 2))
            raw[base + off: base + off + 2] = v.tobytes()
        if name == "MXFP4":
            raw[base] = int(rng.integers(110, 140))
        if name == "Q8_K":
            raw[base: base + 4] = np.float32(rng.uniform(-0.1, 0.1)).tobytes()
    return bytes(raw), elems * N_BLOCKS


def main():
    out = {"sizes": {}, "dequant": [], "quantize": []}
    for t, (elems, nbytes) in GGML_QUANT_SIZES.items():
        out["sizes"][t.name] = {"id": int(t), "block_elems": elems, "block_bytes": nbytes}
    for name in ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "MXFP4", "Q2_K", "Q3_K",
                 "Q4_K", "Q5_K", "Q6_K", "IQ4_XS", "Q8_K"]:
        raw, n = random_blocks(name)
        if name == "Q8_K":
            blocks = np.frombuffer(raw, dtype=np.uint8).reshape(N_BLOCKS, 292)
            d = blocks[:, :4].copy().view(np.float32)
            q = blocks[:, 4:260].copy().view(np.int8).astype(np.float32)
            y = (d * q).reshape(-1)
            source = "formula"
        else:
            y = quants.dequantize(np.frombuffer(raw, dtype=np.uint8), T[name]).reshape(-1)
            source = "gguf " + getattr(__import__("gguf"), "__version__", "package")
        out["dequant"].append({"type": name, "id": int(T[name]), "n": n, "hex": raw.hex(),
                               "expected": [float(v) for v in y.astype(np.float32)],
                               "source": source})
    for name in ["F16", "BF16"]:
        x = (rng.standard_normal(64) * 3).astype(np.float32)
        raw = quants.quantize(x, T[name]).tobytes()
        y = quants.dequantize(np.frombuffer(raw, dtype=np.uint8), T[name]).reshape(-1)
        out["dequant"].append({"type": name, "id": int(T[name]), "n": 64, "hex": raw.hex(),
                               "expected": [float(v) for v in y], "source": "gguf"})
        out["quantize"].append({"type": name, "id": int(T[name]), "input": [float(v) for v in x],
                                "hex": raw.hex()})
    for name in ["Q8_0", "Q4_0"]:
        x = (rng.standard_normal(32 * N_BLOCKS) * rng.uniform(0.1, 4)).astype(np.float32)
        raw = quants.quantize(x.reshape(1, -1), T[name]).tobytes()
        out["quantize"].append({"type": name, "id": int(T[name]), "input": [float(v) for v in x],
                                "hex": raw.hex()})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=0)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
