#!/bin/bash
# next214 (round 36; carry .carry: bench of main 2c23b47 as base, bench + kernel check of wip/bound3 as new):
# bash tools/wip/next214.sh SHA -- flash decode's four-head tensor-core instances at D = 128 held to three CTAs an SM
# (80 registers, 0-4 bytes of spills; two an SM before): at positions 4,224 and up a Qwen3-8B layer's 8 x 34 split CTAs
# no longer fit the 264 slots (round 33's timing: the last CTAs start 5.4 us late), 16 of tg128's 128 steps at depth 4096.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope
ab_depth
echo "ab done t=$(el)"
json $SHA 200 qwen3-8b:Q4_K_M "-bound3"
json $SHA 250 qwen3-8b:Q4_K_M "-q8kv-bound3" --kv q8_0
echo "end t=$(el)"
