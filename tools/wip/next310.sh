#!/bin/bash
# next310 (round 55): main 8f93499's GPU model tests and GPU-vs-CPU tests, then its acceptance JSONs (Qwen3-8B f16 and
# q8_0 KV, Qwen3-30B-A3B, Qwen3.5-9B; -p 512 -n 128 -d 0,4096 -r 2). The same checks for any main commit SHA (round
# 56's 8cbc47c next): bash tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
gpu_tests $SHA
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 400 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
