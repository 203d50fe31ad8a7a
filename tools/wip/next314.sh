#!/bin/bash
# next314 (prepared in round 56 for the next session's first call): main 8cbc47c's GPU model tests and GPU-vs-CPU
# tests (two GPU-vs-CPU cases run round 56's merge kernel at positions 1,024-1,031), then its acceptance JSONs
# (Qwen3-8B f16 and q8_0 KV, Qwen3-30B-A3B, Qwen3.5-9B; -p 512 -n 128 -d 0,4096 -r 2). Pack (clean tree at main):
#   bash tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
gpu_tests $SHA
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 400 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
