#!/bin/bash
# next217 (round 37; carry .carry: bench of main b2230ca as base, bench + kernel check of wip/gateup-bound4 as new,
# .carry/trace): bash tools/wip/next217.sh SHA -- the one-token Q4_K gate-up (the MoE shapes' routed gate-up) held to
# four CTAs an SM: 64 registers, no spills (70 unbounded: 3 an SM, 768 CTAs in waves of 396 + 372; now 528 + 240).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA moe gemv_q8
for i in 1 2; do for b in base new; do
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
  row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done; done
for b in base new; do row "$b d4096" $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
echo "ab done t=$(el)"
trace_row 30b-b4 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1"
json $SHA 300 qwen3-30b-a3b:Q4_K_M "-b4"
echo "end t=$(el)"
