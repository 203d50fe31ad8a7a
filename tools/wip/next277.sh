#!/bin/bash
# next277 (round 50): next276 put form 4 (the weights in a group a row, the dot pipelined, round 39's order) at
# -3.2 % and form 3 (the same plus the staging by cp.async ahead of the weights) at -1.8 %: the grouping costs, the
# staging ahead gains. Forms 5 (id, staging by cp.async, the weights in one group: BW24_COMBINE_PIPE=4) and 6 (staging
# before the id: =5) keep only the gain. Prediction: +0.5 to +1.5 % (30B), the 35B likewise. Then the GPU model tests
# with form 5, and form 5 over the 30B's 768-wide Q4_K rows too (BW24_COMBINE_Q4K_BLOCKS=3).
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-pipe3
for p in 4 5; do export BW24_COMBINE_PIPE=$p; kc $SHA moe; check_rows $SHA moe 'moe down + combine'
  cp "$OUT/kc-moe-$SHA.txt" "$OUT/kc-moe-$SHA-pipe$p.txt"; done
export BW24_COMBINE_PIPE=4; gpu_tests $SHA; unset BW24_COMBINE_PIPE
for i in 1 2; do for p in 0 4 5; do
  row "pipe$p" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=$p; done; done
for p in 0 4 5; do row "pipe$p" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=$p; done
row "pipe4-q4k3" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=4 BW24_COMBINE_Q4K_BLOCKS=3
row "pipe0" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_PIPE=0
echo "end t=$(el)"
