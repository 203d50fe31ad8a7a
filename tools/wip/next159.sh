#!/bin/bash
# next159 (carry .carry only): bash tools/wip/next159.sh SHA  (timeout 500) -- round 28's tip candidate (wip/uniform-items
# 7c7be76 on main 45cd415: the value row with the key row + uniform streamed items): GPU tests and the acceptance JSON of
# Qwen3-8B, Qwen3.5-9B and Qwen3-30B-A3B (Q4_K_M); then the producer's issue with uniform items too (prod: branch
# wip/uniform-producer, bench only, a measurement for the next round). Pack: tools/wip/pack-bins.sh new HEAD bw24-bench
# tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (uniform-items); tools/wip/pack-bins.sh prod HEAD bw24-bench
# (uniform-producer). Expect: GPU tests passed. Prediction (prod): +0-0.5 % (the producer's refill ~40 instructions sooner).
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
json $SHA 300 qwen3-8b:Q4_K_M ""
json $SHA 300 qwen3.5-9b:Q4_K_M ""
json $SHA 300 qwen3-30b-a3b:Q4_K_M ""
for i in 1 2; do for b in new prod; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  [ $(el) -lt 430 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
echo "end t=$(el)"
