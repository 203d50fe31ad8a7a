#!/bin/bash
# fuzz-seeds.sh SYNTH OUTDIR: the model fuzz target's seeds (tests/fuzz/fuzz_model.cpp), the smallest synthetic model
# of each architecture written as GGUF by bw24-synth (benchmarks/synthetic.cpp's fuzz-* shapes, Q8_0, 60-270 KB each).
# ctest runs it before fuzz_seed_replay; for libFuzzer:
#   bash tools/fuzz-seeds.sh build/bw24-synth /tmp/model-seeds
#   build-fuzz/tests/fuzz/fuzz_model -max_len=300000 -rss_limit_mb=2048 /tmp/model-corpus /tmp/model-seeds
set -euo pipefail
synth=$1 out=$2
mkdir -p "$out"
for shape in fuzz-qwen3 fuzz-llama fuzz-qwen3moe fuzz-qwen35 fuzz-qwen35moe; do
  log=$("$synth" "$shape" Q8_0 "$out/$shape.gguf" 2>&1) || { echo "$log" >&2; exit 1; }
done
echo "fuzz-seeds: $(ls "$out" | wc -l) model seeds in $out"
