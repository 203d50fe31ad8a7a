#!/usr/bin/env python3
"""Regression files for the loaders: one small malformed file per class of bug that llama.cpp
fixed in its GGUF reader (and the safetensors equivalents). Each must be rejected with
BW24_ERR_FORMAT and a message naming the problem. Stdlib only.
Run: python tests/reference/make_bad_files.py  -> tests/data/bad/*
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "bad")


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def header(n_tensors, n_kv, version=3):
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def kv_str(k, v):
    return s(k) + struct.pack("<I", 8) + s(v)


def tensor_info(name, dims, ttype, offset):
    return s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + \
        struct.pack("<IQ", ttype, offset)


def pad(b, a=32):
    return b + b"\0" * ((-len(b)) % a)


def gguf_files():
    arch = kv_str("general.architecture", "llama")
    files = {}
    # 1. Tensor byte size overflows 64 bits when computed from ne[] (CVE-class: size wrap-around).
    body = header(1, 1) + arch + tensor_info("w", [1 << 32, 1 << 32, 1 << 32], 0, 0)
    files["gguf-tensor-size-overflow.gguf"] = pad(body) + b"\0" * 64
    # 2. A string whose length field is huge: must not allocate it.
    files["gguf-unbounded-string.gguf"] = header(0, 1) + struct.pack("<Q", 1 << 62) + b"key"
    # 3. An array whose count is huge: must not allocate count elements.
    files["gguf-unbounded-array.gguf"] = header(0, 1) + s("tokenizer.ggml.tokens") + \
        struct.pack("<IIQ", 9, 8, 1 << 61) + s("a")
    # 4. Array element type confusion: an out-of-range element type id.
    files["gguf-array-element-type.gguf"] = header(0, 1) + s("a") + struct.pack("<IIQ", 9, 77, 1) + b"\0" * 8
    # 5. Alignment read: general.alignment of the wrong type (string) ...
    files["gguf-alignment-type.gguf"] = header(0, 1) + kv_str("general.alignment", "32")
    # ... and not a power of two, then a tensor placed by it.
    body = header(1, 2) + arch + s("general.alignment") + struct.pack("<II", 4, 3) + \
        tensor_info("w", [4], 0, 0)
    files["gguf-alignment-not-pow2.gguf"] = body + b"\0" * 64
    # 6. Tensor offset not aligned.
    body = header(1, 1) + arch + tensor_info("w", [4], 0, 4)
    files["gguf-unaligned-offset.gguf"] = pad(body) + b"\0" * 64
    # 7. Tensor data past the end of the file (truncated download).
    body = header(1, 1) + arch + tensor_info("w", [1024], 0, 0)
    files["gguf-truncated-data.gguf"] = pad(body) + b"\0" * 100
    # 8. Too many dimensions.
    files["gguf-too-many-dims.gguf"] = header(1, 0) + tensor_info("w", [1] * 5, 0, 0) + b"\0" * 64
    # 9. Unknown / removed ggml type id.
    files["gguf-removed-type.gguf"] = pad(header(1, 0) + tensor_info("w", [32], 4, 0)) + b"\0" * 64
    # 10. Row length not a multiple of the quant block (Q4_0 needs 32).
    files["gguf-block-misaligned-row.gguf"] = pad(header(1, 0) + tensor_info("w", [33], 2, 0)) + b"\0" * 64
    # 11. Huge tensor / kv counts with a tiny file.
    files["gguf-huge-counts.gguf"] = header(1 << 40, 1 << 40)
    # 12. Unsupported version 1.
    files["gguf-version1.gguf"] = header(0, 0, version=1)
    # 13. Overlapping tensors.
    body = header(2, 0) + tensor_info("a", [8], 0, 0) + tensor_info("b", [8], 0, 0)
    files["gguf-overlapping-tensors.gguf"] = pad(body) + b"\0" * 64
    # 14. Arrays nested deeper than any real file uses.
    nested = struct.pack("<IQ", 9, 1) * 8 + struct.pack("<IQ", 4, 0)
    files["gguf-deep-nesting.gguf"] = header(0, 1) + s("a") + struct.pack("<I", 9) + nested
    return files


def st(header_obj, data=b"", header_len=None):
    h = json.dumps(header_obj).encode()
    n = len(h) if header_len is None else header_len
    return struct.pack("<Q", n) + h + data


def safetensors_files():
    return {
        "st-header-too-long.safetensors": st({}, header_len=1 << 40),
        "st-not-json.safetensors": struct.pack("<Q", 5) + b"{oops",
        "st-offsets-past-end.safetensors": st({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
        "st-size-mismatch.safetensors": st({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 12]}}, b"\0" * 16),
        "st-negative-dim.safetensors": st({"w": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, b"\0" * 16),
        "st-unknown-dtype.safetensors": st({"w": {"dtype": "Q9", "shape": [4], "data_offsets": [0, 4]}}, b"\0" * 4),
        "st-shape-overflow.safetensors": st({"w": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 0]}}),
        "st-overlap.safetensors": st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
        "st-entry-not-object.safetensors": st({"w": [1, 2]}),
    }


def seed_files():
    """Small valid files: the fuzzers' seed corpora (tests/fuzz/corpus)."""
    kvs = [kv_str("general.architecture", "llama"),
           s("llama.block_count") + struct.pack("<II", 4, 2),
           s("llama.rope.freq_base") + struct.pack("<If", 6, 10000.0),
           s("flag") + struct.pack("<IB", 7, 1),
           s("i64") + struct.pack("<Iq", 11, -5),
           s("tokens") + struct.pack("<IIQ", 9, 8, 3) + s("a") + s("bc") + s("<0x0A>"),
           s("scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.5, -1, 2),
           s("nested") + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 5, 2) + struct.pack("<2i", 1, -1)]
    infos = tensor_info("a.weight", [4, 2], 0, 0) + tensor_info("q.weight", [32], 2, 32) + \
        tensor_info("h.weight", [8], 1, 64)
    gg = pad(header(3, len(kvs)) + b"".join(kvs) + infos) + bytes(range(32)) + bytes(18) + bytes(14) + bytes(16)
    sf = st({"__metadata__": {"format": "pt"},
             "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
             "b": {"dtype": "BF16", "shape": [4], "data_offsets": [16, 24]}}, bytes(24))
    return {"gguf/small.gguf": gg, "gguf/empty.gguf": header(0, 0),
            "safetensors/small.safetensors": sf, "safetensors/empty.safetensors": st({})}


def main():
    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")
    for name, data in seed_files().items():
        os.makedirs(os.path.dirname(os.path.join(seeds, name)), exist_ok=True)
        with open(os.path.join(seeds, name), "wb") as f:
            f.write(data)
    os.makedirs(OUT, exist_ok=True)
    for name, data in {**gguf_files(), **safetensors_files()}.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(gguf_files()) + len(safetensors_files())} files to {OUT}")


if __name__ == "__main__":
    main()
