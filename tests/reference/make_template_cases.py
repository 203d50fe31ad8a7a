#!/usr/bin/env python3
"""Chat-template test cases rendered by Python jinja2 the way transformers renders them.

Writes tests/data/chat/cases.json: for each template in tests/data/chat/*.jinja, generated
conversations (system prompts, multi-turn, Unicode, stray whitespace, tool calls and tool results
for templates that have them, thinking on/off for Qwen3) and the exact rendered text, or
"error": true where the template raises. Also folds in ../shared/models/reference/
qwen3_chat_template_cases.json when present. Run: python tests/reference/make_template_cases.py
"""
import json
import os
import random

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
CHAT = os.path.join(HERE, "..", "data", "chat")
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "models", "reference", "qwen3_chat_template_cases.json")

SPECIALS = {"qwen3": ("", "<|im_end|>"), "smollm2": ("<|im_start|>", "<|im_end|>"),
            "phi3": ("<s>", "<|endoftext|>"), "gemma3": ("<bos>", "<eos>")}

TEXTS = ["Hello!", "What is 2+2?", "  leading and trailing spaces  ", "line one\nline two\n\n",
         "Unicode: héllo wörld, 日本語, emoji 🦙🚀", "quotes ' and \" and \\ backslash", "",
         "tabs\tand\ttabs", "<b>html</b> & entities", "Tell me a story about a dragon.",
         "Résumé: naïve café", "1234567890", "multi\n\nparagraph\n\ntext", "Ünïcödé ✓ 中文 한국어"]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
                                           "parameters": {"type": "object", "properties": {
                                               "city": {"type": "string"}, "days": {"type": "integer"}},
                                               "required": ["city"]}}},
         {"type": "function", "function": {"name": "add", "description": "Add two numbers",
                                           "parameters": {"type": "object", "properties": {
                                               "a": {"type": "number"}, "b": {"type": "number"}}}}}]


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise TemplateError(message)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def conversation(rng, name):
    msgs = []
    if rng.random() < 0.5:
        msgs.append({"role": "system", "content": rng.choice(TEXTS[:6] + ["You are a pirate."])})
    turns = rng.randint(1, 4)
    for t in range(turns):
        msgs.append({"role": "user", "content": rng.choice(TEXTS)})
        if t < turns - 1 or rng.random() < 0.3:
            content = rng.choice(TEXTS)
            if name == "qwen3" and rng.random() < 0.3:
                content = "<think>\nreasoning " + str(t) + "\n</think>\n\n" + content
            msg = {"role": "assistant", "content": content}
            if name == "qwen3" and rng.random() < 0.2:
                msg["reasoning_content"] = "I thought about it."
            msgs.append(msg)
    return msgs


def tool_conversation(rng):
    call_args = rng.choice([{"city": "Paris", "days": 3}, '{"city": "Oslo"}', {"a": 1, "b": 2}])
    calls = [{"type": "function", "function": {"name": "get_weather", "arguments": call_args}}]
    if rng.random() < 0.5:
        calls.append({"function": {"name": "add", "arguments": {"a": 4, "b": 5}}})
    msgs = [{"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": rng.choice(["", "Let me check."]), "tool_calls": calls}]
    for c in calls:
        msgs.append({"role": "tool", "content": json.dumps({"result": "sunny", "for": c["function"]["name"]})})
    if rng.random() < 0.5:
        msgs.append({"role": "assistant", "content": "It is sunny."})
        msgs.append({"role": "user", "content": "Thanks!"})
    if rng.random() < 0.5:
        msgs.insert(0, {"role": "system", "content": "You are a weather bot."})
    return msgs


def main():
    env = environment()
    rng = random.Random(2024)
    cases = []
    for fname in sorted(os.listdir(CHAT)):
        if not fname.endswith(".jinja"):
            continue
        name = fname[:-6]
        source = open(os.path.join(CHAT, fname), encoding="utf-8").read()
        tmpl = env.from_string(source)
        bos, eos = SPECIALS[name]
        contexts = []
        for _ in range(24):
            contexts.append({"messages": conversation(rng, name)})
        if name == "qwen3":
            for _ in range(12):
                ctx = {"messages": tool_conversation(rng), "tools": TOOLS[: rng.randint(1, 2)]}
                contexts.append(ctx)
            for c in contexts[:12]:
                c["enable_thinking"] = rng.choice([True, False])
        if name == "gemma3":
            contexts.append({"messages": [{"role": "system", "content": [{"type": "text", "text": "Read it."}]},
                                          {"role": "user", "content": [{"type": "image"},
                                                                       {"type": "text", "text": " What is it? "}]}]})
            contexts.append({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})
        for ctx in contexts:
            for add_gen in (True, False):
                full = dict(ctx, add_generation_prompt=add_gen, bos_token=bos, eos_token=eos)
                case = {"template": name, "context": full}
                try:
                    case["expected"] = tmpl.render(**full)
                except TemplateError as e:
                    case["error"] = str(e)
                cases.append(case)
    if os.path.exists(SHARED):
        source = open(os.path.join(CHAT, "qwen3.jinja"), encoding="utf-8").read()
        for c in json.load(open(SHARED, encoding="utf-8"))["cases"]:
            ctx = {"messages": c["messages"], "add_generation_prompt": c.get("add_generation_prompt", True),
                   "bos_token": "", "eos_token": "<|im_end|>"}
            for k in ("enable_thinking", "tools"):
                if k in c:
                    ctx[k] = c[k]
            expected = env.from_string(source).render(**ctx)
            assert expected == c["rendered"], c.get("name")
            cases.append({"template": "qwen3", "context": ctx, "expected": expected, "source": "shared"})
    with open(os.path.join(CHAT, "cases.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, ensure_ascii=False, indent=0)
    counts = {}
    for c in cases:
        counts[c["template"]] = counts.get(c["template"], 0) + 1
    print("cases:", counts)


if __name__ == "__main__":
    main()
