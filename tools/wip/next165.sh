#!/bin/bash
# next165 (carry .carry only): bash tools/wip/next165.sh SHA  (timeout 500) -- round 29's verification of main's tip (load-values,
# add-residual-ahead, StreamCut::kWhole landed): the [gpu] model tests and GPU-vs-CPU tests, then the acceptance JSON
# rows (-p 512 -n 128 -d 0,4096 -r 2) of every shape whose target issues 4 and 5 record. Pack on main (clean tree):
# tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3-8b:Q8_0 qwen3-8b:BF16 qwen3.5-9b:Q8_0 \
         qwen3.6-35b-a3b:Q4_K_M qwen3.5-27b:Q4_K_M; do json $SHA 420 $m ""; done
echo "end t=$(el)"
