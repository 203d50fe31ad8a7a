#!/bin/bash
# next118 (carry .carry only): bash tools/wip/next118.sh SHA  (timeout 560)
# new = wip/next118 SHA (main + two changes, both "one L2 round trip fewer after the PDL wait"), packed from its clean
# HEAD; base = main's bench. (1) rmsnorm_q8 loads the lane's own element before the sum of squares, not after it
# (2 launches a layer; prediction: ~0.5 us each, Qwen3-8B Q4_K_M +1-1.7 %, every int8 model alike, BF16 unchanged: its
# norms are rmsnorm). (2) gemv_q8_combine reads its pair's expert and the epilogue's inputs beside the activation
# staging (round 20's wip/combine-early; prediction: Qwen3-30B-A3B / Qwen3.6-35B-A3B +2 %). On the MoE rows the two
# add up; the dense rows are (1) alone.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm moe
check_rows $SHA rmsnorm 'combine'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3-30b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
for m in qwen3.6-35b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:BF16; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
echo "t=$(el)"
json $SHA 440 qwen3-8b:Q4_K_M ""; json $SHA 480 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0; json $SHA 520 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
