#!/usr/bin/env python3
"""Tokenizer agreement corpus: >= 2,000 generated strings (code, whitespace runs, digits, emoji,
CJK and other scripts, combining marks, contractions, special-token text, invalid UTF-8), and the
ids the Hugging Face `tokenizers` package produces for each of the tokenizers bw24 supports.

Reference tokenizers (built with the `tokenizers` package, encode(add_special_tokens=False), which
always matches added tokens written in the text):
  qwen3          ../shared/models/qwen3-tokenizer/tokenizer.json, as shipped
  gpt-2, deepseek-coder, smollm2
                 byte-level BPE from the GGUF's tokens and merges, with the pre-tokenizer each
                 model's own tokenizer.json uses (ByteLevel / deepseek's Split sequence /
                 SmolLM2's Digits + ByteLevel)
  llama-spm, phi-3, gemma3
                 SentencePiece-style BPE from the GGUF's tokens and scores (merges ranked by the
                 merged piece's score, byte fallback, "▁" for spaces, dummy prefix as the GGUF says)
Invalid UTF-8 strings are given to the reference as Python decodes them (errors="replace"), which
is what bw24 does with ill-formed input.
Writes tests/data/tokenizer/corpus.json and tests/data/tokenizer/<name>.ids.json.
Run: python tests/reference/make_tokenizer_corpus.py
"""
import json
import os
import random

import gguf
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "tokenizer")
SHARED = os.path.join(ROOT, "..", "shared", "models")
N = 2200

PIECES = ["hello", "world", "The", " quick", "brown", "fox", "it's", "I'LL", "we'Re", "don't", "ſ", "K",
          "def foo(x):", "    return x**2", "int main() { return 0; }", "<div class=\"a\">", "x += 1;",
          "1", "12", "123", "1234", "3.14159", "1,000,000", "2024-11-29", "0x1F", "v2.0.1",
          "🦙", "🚀", "👨‍👩‍👧", "👍🏽", "🇫🇷", "❤️", "日本語", "中文", "한국어", "Ελληνικά", "русский",
          "العربية", "हिन्दी", "ไทย", "e\u0301", "n\u0303", "A\u030a", "\u00e9", "café", "naïve",
          "Straße", "\u200b", "\u00a0", "\u3000", "\t", "\n", "\r\n", "  ", "   ", "\n\n", " \n ",
          "!!!", "...", "?!", "«»", "—", "'", "\"", "\\", "/", "@", "#", "$", "%", "&", "*", "(", ")",
          "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<start_of_turn>", "<|endoftext|>", "<unk>"]


def make_corpus():
    rng = random.Random(24)
    corpus = []
    for i in range(N):
        kind = i % 10
        if kind == 9:  # invalid UTF-8: raw bytes around valid text
            b = bytearray(rng.choice(PIECES).encode())
            for _ in range(rng.randint(1, 3)):
                b.insert(rng.randint(0, len(b)), rng.choice([0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]))
            corpus.append({"hex": bytes(b).hex()})
            continue
        n = rng.randint(1, 8)
        s = ""
        for _ in range(n):
            p = rng.choice(PIECES)
            if rng.random() < 0.3:
                p = " " * rng.randint(1, 4) + p
            if rng.random() < 0.1:
                p = p + "\n" * rng.randint(1, 3)
            s += p
        corpus.append({"text": s})
    return corpus


def text_of(entry):
    if "text" in entry:
        return entry["text"]
    return bytes.fromhex(entry["hex"]).decode("utf-8", errors="replace")


def gguf_vocab(path):
    r = gguf.GGUFReader(path)
    f = r.fields

    def strings(key):
        fld = f[key]
        return [bytes(fld.parts[i]).decode("utf-8") for i in fld.data]

    def scalar(key, default=None):
        if key not in f:
            return default
        return f[key].contents()

    tokens = strings("tokenizer.ggml.tokens")
    types = [int(f["tokenizer.ggml.token_type"].parts[i][0]) for i in f["tokenizer.ggml.token_type"].data]
    scores = None
    if "tokenizer.ggml.scores" in f:
        scores = [float(f["tokenizer.ggml.scores"].parts[i][0]) for i in f["tokenizer.ggml.scores"].data]
    merges = strings("tokenizer.ggml.merges") if "tokenizer.ggml.merges" in f else None
    return dict(tokens=tokens, types=types, scores=scores, merges=merges,
                add_space_prefix=scalar("tokenizer.ggml.add_space_prefix", True))


def add_specials(tok, v):
    added = [AddedToken(t, special=(ty == 3), normalized=False) for t, ty in zip(v["tokens"], v["types"])
             if ty in (3, 4) and t]
    tok.add_tokens(added)


def bpe_tokenizer(v, pre):
    vocab = {t: i for i, t in reversed(list(enumerate(v["tokens"])))}
    merges = [tuple(m.split(" ", 1)) for m in v["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=False))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    add_specials(tok, v)
    return tok


def spm_tokenizer(v):
    # Merges ranked by the score of the merged piece (higher first), as SentencePiece BPE applies them.
    vocab = {t: i for i, t in reversed(list(enumerate(v["tokens"])))}
    normal = [(t, s) for t, s, ty in zip(v["tokens"], v["scores"], v["types"]) if ty == 1]
    merges = []
    for piece, score in sorted(normal, key=lambda ts: -ts[1]):
        for k in range(1, len(piece)):
            a, b = piece[:k], piece[k:]
            if a in vocab and b in vocab:
                merges.append((score, vocab[piece], a, b))
    merges.sort(key=lambda m: (-m[0], m[1]))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[(a, b) for _, _, a, b in merges], byte_fallback=True,
                               unk_token=None, fuse_unk=False))
    norm = [normalizers.Replace(" ", "▁")]
    if v["add_space_prefix"]:
        norm.insert(0, normalizers.Prepend("▁"))
    tok.normalizer = normalizers.Sequence(norm)
    tok.pre_tokenizer = None
    add_specials(tok, v)
    return tok


def references():
    vdir = os.path.join(SHARED, "llama.cpp-vocab")
    refs = {}
    qwen = os.path.join(SHARED, "qwen3-tokenizer", "tokenizer.json")
    if os.path.exists(qwen):
        refs["qwen3"] = Tokenizer.from_file(qwen)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bl_noregex = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    sources = {
        "gpt-2": (os.path.join(vdir, "ggml-vocab-gpt-2.gguf"), lambda v: bpe_tokenizer(v, byte_level)),
        "deepseek-coder": (os.path.join(vdir, "ggml-vocab-deepseek-coder.gguf"), lambda v: bpe_tokenizer(
            v, pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex("[\r\n]"), "isolated"),
                pre_tokenizers.Split(Regex(r"\s?\p{L}+"), "isolated"),
                pre_tokenizers.Split(Regex(r"\s?\p{P}+"), "isolated"),
                pre_tokenizers.Split(Regex("[一-龥ࠀ-一가-퟿]+"), "isolated"),
                pre_tokenizers.Digits(individual_digits=True), bl_noregex]))),
        "smollm2": (os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"), lambda v: bpe_tokenizer(
            v, pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level]))),
        "llama-spm": (os.path.join(vdir, "ggml-vocab-llama-spm.gguf"), spm_tokenizer),
        "phi-3": (os.path.join(vdir, "ggml-vocab-phi-3.gguf"), spm_tokenizer),
        "gemma3": (os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"), spm_tokenizer),
    }
    for name, (path, build) in sources.items():
        if os.path.exists(path):
            refs[name] = build(gguf_vocab(path))
        else:
            print(f"skip {name}: {path} missing")
    return refs


# Pre-tokenizers by name, as each model's tokenizer.json writes them (llama-bpe: Llama 3;
# qwen35: Qwen3.5). Checked on their own (no vocabulary needed): the pieces HF's pre-tokenizer
# produces, in GPT-2's byte-level form.
PRE = {
    "gpt-2": [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)],
    "llama-bpe": [pre_tokenizers.Split(Regex(
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        "isolated")],
    "qwen2": [pre_tokenizers.Split(Regex(
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        "isolated")],
    "qwen35": [pre_tokenizers.Split(Regex(
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        "isolated")],
    "deepseek-coder": [pre_tokenizers.Split(Regex("[\r\n]"), "isolated"),
                       pre_tokenizers.Split(Regex(r"\s?\p{L}+"), "isolated"),
                       pre_tokenizers.Split(Regex(r"\s?\p{P}+"), "isolated"),
                       pre_tokenizers.Split(Regex("[一-龥ࠀ-一가-퟿]+"), "isolated"),
                       pre_tokenizers.Digits(individual_digits=True)],
    "smollm": [pre_tokenizers.Digits(individual_digits=True),
               pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)],
}


def pre_pieces(steps, text):
    seq = pre_tokenizers.Sequence(steps + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
                                  if not isinstance(steps[-1], pre_tokenizers.ByteLevel) else steps)
    return [p for p, _ in seq.pre_tokenize_str(text)]


def main():
    os.makedirs(OUT, exist_ok=True)
    corpus = make_corpus()
    with open(os.path.join(OUT, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump(corpus, f, ensure_ascii=False, indent=0)
    pre = {name: [pre_pieces(steps, text_of(e)) for e in corpus] for name, steps in PRE.items()}
    with open(os.path.join(OUT, "pretokenizers.json"), "w", encoding="utf-8") as f:
        json.dump(pre, f, ensure_ascii=False, separators=(",", ":"))
    for name, tok in references().items():
        ids = [tok.encode(text_of(e), add_special_tokens=False).ids for e in corpus]
        with open(os.path.join(OUT, name + ".ids.json"), "w") as f:
            json.dump(ids, f, separators=(",", ":"))
        print(f"{name}: {len(ids)} strings, {sum(map(len, ids))} tokens")


if __name__ == "__main__":
    main()
