#!/bin/bash
# next281 (round 51): where a latency-bound kernel lets its successor launch (branch wip/late-trigger).
# BW24_TRIG_NORM (rmsnorm_q8), BW24_TRIG_FLASH (flash decode's split kernel where no merge launch follows),
# BW24_TRIG_MERGE (the merge kernel): 0 = trigger before the PDL wait (main), 1 = right after the wait, 2 = after the
# kernel's first loads landed (norm: the row's sum; split: the scores; merge: the (M, L) loads).
# Why: round 31 measured a norm at 1.6-2.0 us with no early copies in the streamed GEMV after it, ~3 us with them;
# a later trigger starts those copies after the latency-bound kernel's own L2 loads. Prediction: -1 to +2 % (8B).
SHA=$1
source tools/wip/lib.sh
begin $SHA-late-trigger
export BW24_TRIG_NORM=2 BW24_TRIG_FLASH=2 BW24_TRIG_MERGE=2
kc_one $SHA attention attention_rope; gpu_tests $SHA
unset BW24_TRIG_NORM BW24_TRIG_FLASH BW24_TRIG_MERGE
A="-p 16 -n 128 -r 2"
for i in 1 2; do
  row base new qwen3-8b:Q4_K_M tg128 "$A"
  for m in 1 2; do row norm$m new qwen3-8b:Q4_K_M tg128 "$A" BW24_TRIG_NORM=$m; done
  for m in 1 2; do row flash$m new qwen3-8b:Q4_K_M tg128 "$A" BW24_TRIG_FLASH=$m; done
done
echo "d0 done t=$(el)"
for m in 0 1 2; do row merge$m new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_TRIG_MERGE=$m; done
for m in 0 2; do row norm$m new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_TRIG_NORM=$m; done
echo "end t=$(el)"
