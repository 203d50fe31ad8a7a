#!/bin/bash
# next216 (round 37; carry .carry: bench of main b2230ca as base, bench + kernel check of wip/stage-inside as new,
# .carry/trace): bash tools/wip/next216.sh SHA -- the int8 GEMV's activations staged once the first weight loads are
# out (routed gate-up, routed down + combine: expert id, weights and activations in two round trips, not three), Q6_K's
# scales and d loaded with its quants. One binary, BW24_GEMV_EARLY_WEIGHTS=0 = the old order, beside main.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA moe gemv_q8
for i in 1 2; do
  row base base qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
  for e in 0 1; do row "early=$e" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_GEMV_EARLY_WEIGHTS=$e; done
done
for m in qwen3.6-35b-a3b:Q4_K_M qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  row base base $m tg128 "-p 16 -n 128 -r 3"
  for e in 0 1; do row "early=$e" new $m tg128 "-p 16 -n 128 -r 3" BW24_GEMV_EARLY_WEIGHTS=$e; done
done
for e in 0 1; do row "early=$e d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_GEMV_EARLY_WEIGHTS=$e; done
echo "ab done t=$(el)"
for e in 0 1; do trace_row early$e qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_GEMV_EARLY_WEIGHTS=$e; done
json $SHA 420 qwen3-30b-a3b:Q4_K_M "-early"
echo "end t=$(el)"
