#!/bin/bash
# next373 (round 64): the folding producer sends its half of the block before its sum of squares (wip/fold-send-first,
# packed as new with the tests) against main a337f2e (base), then, in the same call, the candidate's checks and JSONs.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_gpu_vs_cpu_tests
# tests/bw24_model_tests; base: build-pack/a337f2e/bw24-bench.
SHA=$1
source tools/wip/lib.sh
begin $SHA-send
kc $SHA gemv_q8_norm_fold
for i in 1 2 3; do
  row base base qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row new new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done
row base-d4096 base qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row new-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row base base qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row new new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M "-r2"
json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
gpu_tests $SHA
echo "end t=$(el)"
