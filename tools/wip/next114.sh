#!/bin/bash
# next114 (carry .carry only): bash tools/wip/next114.sh SHA  (timeout 560)
# new = wip/resid-ahead SHA (on wip/act-once 90c27ee), packed from its clean HEAD; base = wip/act-once's bench (or
# main's, once act-once has landed).
# One change, in the streamed GEMV's add epilogue (O and down projections into the residual): lane 0 reads the row's
# old value before the stage's wait of the item that completes the row, not after the sums, so that L2 round trip
# (~0.4 us) runs beside the wait instead of ending the launch. Same values, same add (same bits). Registers: every
# instance <= its cap, no spills (BF16 add 56, Q4_K add 63).
# Prediction: two add launches a layer, ~0.3-0.4 us each: Qwen3-8B Q4_K_M / BF16 +1-1.5 %, Qwen3-30B-A3B +0.5 % (its
# down is the routed combine, not this kernel).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_float gemv_float_multi gemv_q8_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:BF16 qwen3-8b:Q8_0; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
row base base qwen3-30b-a3b:Q4_K_M tg128 "$A"; row new new qwen3-30b-a3b:Q4_K_M tg128 "$A"
echo "t=$(el)"
json $SHA 460 qwen3-8b:Q4_K_M ""
echo "end t=$(el)"
