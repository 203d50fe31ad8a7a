#!/bin/bash
# next187 (carry .carry only): bash tools/wip/next187.sh SHA  (timeout 480) -- flash decode's decode-step instances
# (branch wip/step-flags: kStep, the fused rope, the int8 O and the gate as constants; f16 D = 128 one head 4,512 ->
# 3,856 SASS instructions, four heads 4,688 -> 4,040, D = 256 5,688 -> 5,088). build-base = main 26e047d's bench,
# build-new = the branch (bench + kernel check). Round 31's typed writer (-2,688 instructions) gave +3.7 % on the 8B.
# Prediction: Qwen3-8B, Qwen3-30B-A3B +0.8-1.5 %, Qwen3.5-9B +0.5-1 % (8 attention layers of 32).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention_rope attention_bound
grep -E "int8 O fused" $OUT/kc-attention_rope-$SHA.txt | head -4
echo "int8 O rows: $(grep -c 'int8 O fused' $OUT/kc-attention_rope-$SHA.txt), not ok: $(grep 'int8 O fused' $OUT/kc-attention_rope-$SHA.txt | grep -vc ' ok ')"
ab "-p 16 -n 128 -r 3" qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M
echo "end t=$(el)"
