#!/bin/bash
# next297 (round 53): wip/eight-head-step (155a9ee): flash decode's Qwen3 step instance (fused rope, int8 O, f16 /
# bf16 / q8_0 cache at D = 128) for CTAs of eight query heads, which Qwen3-30B-A3B's split kernel runs at depth
# (4 KV heads x 37 splits, one group: the auto rule), instead of the generic instance with eight predicated heads.
# base = main's bench (5c1fddc's device code). Prediction: +1-3 % at depth 4096 and 8192 (next296: four-head groups
# +4.1 % at 4096 but -8.2 % at 8192, so the parallelism is not the whole story there).
# Pack: base--bw24-bench.xz from 5c1fddc's build; tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check.
SHA=$1
source tools/wip/lib.sh
begin $SHA-eight-head
kc_one $SHA attention_rope attention
check_rows $SHA attention_rope 'int8 O fused'
for b in base new; do row $b-d4096 $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2"; done
for b in base new; do row $b-d8192 $b qwen3-30b-a3b:Q4_K_M tg128 "-p 0 -n 128 -d 8192 -r 2"; done
echo "end t=$(el)"
