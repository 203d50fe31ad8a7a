#!/bin/bash
# next275 (round 50): the combine pipelined (wip/combine-pipe): the activation rows by cp.async right after the PDL
# wait, before the weights; the weights in a commit group a row; each row's dot once its group landed.
# BW24_COMBINE_PIPE=0: round 39's cp.async form (one group, staging behind the weights), same binary;
# BW24_COMBINE_Q4K_BLOCKS=3: the 30B's 768-wide Q4_K rows through the cp.async forms too (main: register loads).
# Prediction: the Q6_K combine's staging stops queueing behind its weights (8,375 cycles, round 49) and three of four
# rows' dots overlap the copies: ~0.7-1 us a Q6_K combine, 30B tg128 +1.5-2.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-pipe
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
check_rows $SHA moe 'moe decode occupancy'
gpu_tests $SHA
export BW24_COMBINE_Q4K_BLOCKS=3; cp "$OUT/kc-moe-$SHA.txt" "$OUT/kc-moe-$SHA-q4k2.txt"; kc $SHA moe
check_rows $SHA moe 'moe down + combine'
cp "$OUT/gpu-tests-$SHA.txt" "$OUT/gpu-tests-$SHA-q4k2.txt"; gpu_tests $SHA; unset BW24_COMBINE_Q4K_BLOCKS
for i in 1 2; do
  row "pipe0" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=0
  row "pipe1" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=1
  row "pipe1-q4k3" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_Q4K_BLOCKS=3
done
row "pipe0" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=0
row "pipe1" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=1
echo "end t=$(el)"
