#!/bin/bash
# next278 (round 50): main's landed combine order (form 5 of wip/combine-pipe) checked and recorded: kernel check moe,
# the GPU model tests, the acceptance JSON of the MoE shapes (bins: new = main's bench, kernel check, model tests).
SHA=$1
source tools/wip/lib.sh
begin $SHA-landed
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
check_rows $SHA moe 'weights by cp.async'
check_rows $SHA moe 'moe decode occupancy'
gpu_tests $SHA
for i in 1; do for a in 0 1; do
  row "async$a" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_ASYNC=$a; done; done
json $SHA 300 qwen3-30b-a3b:Q4_K_M ""
json $SHA 340 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
