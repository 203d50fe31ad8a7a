#!/bin/bash
# next283 (round 51): the landed late trigger (main b3edee8): the attention kernel checks and the GPU model tests on
# the landing build, one A/B pair in its binary (BW24_FLASH_LATE_TRIGGER=0 / default), and the acceptance JSON of
# Qwen3-8B and Qwen3-30B-A3B (pp512, tg128, depth 4096).
SHA=$1
source tools/wip/lib.sh
begin $SHA-landed
kc_one $SHA attention attention_rope; gpu_tests $SHA
for t in 0 1; do row late$t new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_FLASH_LATE_TRIGGER=$t; done
json $SHA 300 qwen3-8b:Q4_K_M ""
json $SHA 360 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
