#!/bin/bash
# next104 (carry .carry only): bash tools/wip/next104.sh SHA  (timeout 260)
# new = main SHA: Q4_K / Q5_K activations before the wait (a0edfcf's SASS), Q6_K after (155b7c3's SASS), F16 / BF16
# before (both); base = 155b7c3's bench. Prediction: Qwen3-8B Q4_K_M +1 % (next103's +0.5 % without its Q6_K loss),
# Qwen3-30B-A3B +-0.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
[ $(el) -lt 200 ] && { row base base qwen3.5-9b:Q4_K_M tg128 "$A"; row new new qwen3.5-9b:Q4_K_M tg128 "$A"; }
echo "end t=$(el)"
