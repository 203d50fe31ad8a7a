#!/usr/bin/env bash
# The main job (README): build bw24 and generate with it on the CPU.
# Today it runs a golden fixture (tiny qwen3 with random weights, logits checked against
# transformers) and, when ../shared is present, stories260K; the text issue turns it into a chat
# with a real model fetched from a package.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBW24_CUDA_ARCHS=90 >/dev/null
cmake --build build -j "$(nproc)" --target bw24-generate
device=cpu
if ./build/bw24-generate --help >/dev/null && command -v nvidia-smi >/dev/null 2>&1; then
  echo "(a GPU is present, but the CUDA kernels land with the CUDA issue: running on the CPU)"
fi
echo "== golden qwen3 fixture (tests/data/golden/qwen3), 32 greedy tokens:"
./build/bw24-generate -m tests/data/golden/qwen3 --prompt-ids 1,17,42,99,3,200,77,5,128,64 -n 32 --device $device
if [ -f ../shared/models/stories260K.gguf ]; then
  echo "== stories260K (llama.cpp's CI model), 'Once upon a time' as ids:"
  ./build/bw24-generate -m ../shared/models/stories260K.gguf --prompt-ids 1,403,407,261,378 -n 48 --json
fi
