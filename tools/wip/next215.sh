#!/bin/bash
# next215 (round 37; carry .carry with bins and .carry/trace): bash tools/wip/next215.sh SHA -- flash decode's tail
# merge (branch wip/tail-merge): past 8 visible splits the last G split CTAs of a KV head to finish each merge one query
# head (merge_head, merge_kernel's code), so the merge launch and its boundary go. One binary, BW24_FLASH_TAIL_MERGE=0
# = split + merge launch. Kernel check (tail on / off bits, the fused step against the merge launch), GPU tests,
# the A/B at depth 4096 (f16 twice, q8_0), depth 0 and Qwen3-30B-A3B, traces of both at depth 4096, the JSON rows.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'tail merge'
grep "tail merge" $OUT/kc-attention-$SHA.txt | head -8
check_rows $SHA attention 'bits'
# gpu_tests: in a later call (the carry limit)
for i in 1 2; do for s in 0 1; do
  row "tail=$s" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_TAIL_MERGE=$s; done; done
for s in 0 1; do row "tail=$s q8" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_FLASH_TAIL_MERGE=$s; done
for s in 0 1; do row "tail=$s d0" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_FLASH_TAIL_MERGE=$s; done
for s in 0 1; do row "tail=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_TAIL_MERGE=$s; done
echo "ab done t=$(el)"
for s in 0 1; do trace_row tail$s qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1" BW24_FLASH_TAIL_MERGE=$s; done
json $SHA 400 qwen3-8b:Q4_K_M "-tail"
json $SHA 450 qwen3-8b:Q4_K_M "-q8kv-tail" --kv q8_0
echo "end t=$(el)"
