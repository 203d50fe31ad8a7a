#!/bin/bash
# next143 (carry .carry only): bash tools/wip/next143.sh SHA  (timeout 480) -- round 26: four GEMV segments a launch, so a
# delta-net layer's in_qkv, in_z, in_b and in_a are one launch, not two (branch wip/four-segments). main = 80de557's bench.
# Pack: tools/wip/pack-bins.sh main 80de557 bw24-bench; tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check
# tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests, and build-pack/SHA/libbw24.so.0 as new--libbw24.so.0.xz.
# Expect: kernel check gemv_multi, gemv_q8_multi, gemv_q8_streamed all ok (four-segment rows bit-equal), GPU tests
# passed. Prediction (next142's trace: the in_a launch's segment 1.8-2.5 us a layer): Qwen3.5-9B tg128 +2-2.5 % (24
# delta-net layers), Qwen3.6-35B-A3B +2.5-3 % (30 of 40), dense rows unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_multi gemv_q8_multi gemv_q8_streamed
check_rows $SHA gemv_multi ' + 9 x\| + 32 x'
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 330 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do for m in qwen3.5-9b:Q8_0 qwen3-8b:Q4_K_M; do
  [ $(el) -lt 360 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done
json $SHA 400 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
