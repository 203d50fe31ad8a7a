#!/bin/bash
# next122 (carry .carry only): bash tools/wip/next122.sh SHA  (timeout 590)
# Round 22's verification and acceptance rows. new = main SHA (five programs packed from its clean HEAD): next121's
# three round-trip changes, stage_q8_rows ahead per caller (streamed six, combine two, warp-per-row one: next121's six
# everywhere cost Qwen3-30B-A3B 2.9 %), and q8_0 KV elements converted by byte permute + FADD instead of I2F (a
# quarter-rate conversion, ~300 M a Qwen3-8B token at depth 4096). mid = wip/r22 08dc9fd's bench (the three changes).
# Predictions over mid: Qwen3-8B Q4_K_M +1.5 %, Q8_0 +0.8 %, Qwen3-30B-A3B >= 0; q8_0-KV depth-4096 rows +5-10 %
# (the conversions off the split kernel's issue), f16-KV rows as the depth-0 gain.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm moe attention flash_prefill
check_rows $SHA rmsnorm 'combine'
check_rows $SHA rmsnorm 'pos 17000'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"; D="-p 16 -n 128 -r 3 -d 4096"
for b in mid new; do row "$b d4096 kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done
for b in mid new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$A"; done
for b in mid new; do row $b $b qwen3-8b:Q4_K_M tg128 "$A"; done
echo "t=$(el)"
json $SHA 560 qwen3-8b:Q4_K_M ""
json $SHA 560 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 560 qwen3-8b:Q8_0 ""
json $SHA 560 qwen3-30b-a3b:Q4_K_M ""
json $SHA 560 qwen3.5-9b:Q8_0 ""
json $SHA 560 qwen3-8b:BF16 ""
json $SHA 560 qwen3.5-9b:Q4_K_M ""
json $SHA 560 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
