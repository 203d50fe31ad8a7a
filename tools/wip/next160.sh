#!/bin/bash
# next160 (carry .carry only): bash tools/wip/next160.sh SHA  (timeout 250) -- round 28: the producer's issue with uniform
# items too (wip/uniform-producer 4286274 on b8dc4cd), measured +1.1 % / +1.4 % in next159: its kernel checks, GPU tests,
# and the acceptance JSON of Qwen3-8B and Qwen3-30B-A3B. Pack: tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests. Expect: all ok, the streamed rows as next158's.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float
gpu_tests $SHA
json $SHA 170 qwen3-8b:Q4_K_M ""
json $SHA 190 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
