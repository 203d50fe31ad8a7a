#!/bin/bash
# next292 (round 53): main with merge-once landed (5c1fddc): the attention kernel-check families, the GPU model tests,
# the acceptance JSONs (Qwen3-8B f16 and q8_0 KV, Qwen3-30B-A3B, Qwen3.5-9B) and rows at positions 513-640.
# Pack (on main, clean tree): tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests, then leave the last out (the carry's size; next293 runs it).
SHA=$1
source tools/wip/lib.sh
begin $SHA-landed
gpu_tests $SHA
kc_one $SHA attention attention_rope attention_bound
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M -q8 --kv q8_0
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 400 qwen3.5-9b:Q4_K_M ""
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do row d512 new $m tg128 "-p 0 -d 512 -n 128 -r 2"; done
echo "end t=$(el)"
