#!/bin/bash
# next167 (carry .carry only): bash tools/wip/next167.sh SHA  (timeout 230) -- round 29's closing check of main's tip
# (c7bb4af: + the scale decode by selects): the [gpu] model tests and GPU-vs-CPU tests of the tip, then the acceptance JSON
# rows the scale change moves (Qwen3-8B / Qwen3.5-9B Q4_K_M) and BF16 (read 215.0 on a46a5c0, next165). Pack on main (clean
# tree): tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:BF16 qwen3-30b-a3b:Q4_K_M; do json $SHA 150 $m ""; done
echo "end t=$(el)"
