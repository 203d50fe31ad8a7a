#!/bin/bash
# next111 (carry .carry only): bash tools/wip/next111.sh SHA  (timeout 560)
# new = wip/short-stages SHA, packed from its clean HEAD; base = main 4ae9735's bench (device code = cfea0d5).
# One change: a streamed launch whose rows fill at most half a piece (Q4_K / Q5_K one-matrix, K <= 2048: the 30B's
# Q, K, V, the 35B's projections; Q6_K / Q8_0 / F16 / BF16 rows of at most half their pieces) gets 5 ring stages, not 3.
# next109 / next110 (all Q4_K / Q5_K launches at 5 stages): 30B +2.4 %, 35B +3.3 %, 9B -2.3 %, 8B +0.3 %.
# Prediction: 30B and 35B +1.5-3 %, 8B and 9B unchanged (no row that short), 0.6B within noise.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float gemv_float_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
for m in qwen3.5-9b:Q4_K_M qwen3-0.6b:Q4_K_M; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
echo "t=$(el)"
# Issue 5's Qwen3.5-9B Q8_0 bar (>= 375; 320.7 in round 17, before Q8_0 was streamed: cfea0d5, in base and new alike)
json $SHA 420 qwen3.5-9b:Q8_0 ""; json $SHA 470 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
