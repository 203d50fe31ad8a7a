#!/bin/bash
# next371 (round 64): the landing build (a337f2e: the folded consumers' 1 / rms once a warp; Q + K and V overlapping at
# every position): kernel check, the acceptance JSONs (Qwen3-8B f16 twice and q8_0 KV, Qwen3-30B-A3B, Qwen3.5-9B) and
# the GPU tests. Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_gpu_vs_cpu_tests
# tests/bw24_model_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA-land
kc $SHA gemv_q8_chain gemv_q8_norm_fold
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M "-r2"
json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 400 qwen3.5-9b:Q4_K_M ""
gpu_tests $SHA
echo "end t=$(el)"
