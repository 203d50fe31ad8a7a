#!/bin/bash
# next138 (carry .carry only): bash tools/wip/next138.sh SHA  (timeout 560) -- round 25: Q and K (Q4_K / Q5_K) with V
# (Q6_K) in one streamed launch (branch wip/qkv-mixed 3155e67; gemv_q8_multi_mixed). main = 7bf7dfb's bench (= main
# 1c7553b's device code). Expect: kernel check gemv_q8_mixed all ok (every output bit-equal to its single-type
# launch), the streamed / multi families as before, GPU tests passed. Prediction: Qwen3-8B Q4_K_M tg128 +2-3 % (18 of
# 36 layers lose a launch: V alone took 5.0 us of 12.9 serialized), Qwen3-30B-A3B +3-4 % (24 of 48 layers, V 6.9 us),
# Qwen3.6-35B-A3B similar, Qwen3.5-9B < 1 % (its gated attention layers only), Qwen3-8B Q8_0 unchanged (its SASS moved
# by register renaming only).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_mixed gemv_q8_streamed gemv_q8_multi
check_rows $SHA gemv_q8_mixed 'gemv_q8_mixed'
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 330 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do for m in qwen3.6-35b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:Q5_K_M qwen3-8b:Q8_0; do
  [ $(el) -lt 420 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done
json $SHA 470 qwen3-8b:Q4_K_M ""
json $SHA 500 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
echo "end t=$(el)"
