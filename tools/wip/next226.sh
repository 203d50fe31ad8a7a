#!/bin/bash
# next226 (prepared in round 38, not run: the session's device time was spent; carry .carry: bench + kernel check of
# wip/combine-async d71c901, whose diff is tools/wip/patches/combine-async.patch): bash tools/wip/next226.sh SHA -- the
# routed down + combine with its Q4_K / Q6_K weights copied into shared memory by cp.async right after the expert id,
# before the activations are staged (round 38's stamps: the weights started 1.1 us after the wait). The moe family
# (its "moe down + combine" rows say "weights by cp.async" where the async kernel ran, bit-equal to the routed store
# launch + moe_combine), then one binary A/B (BW24_COMBINE_ASYNC=0 = main's combine).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
grep "cp.async" $OUT/kc-moe-$SHA.txt | head -8
for i in 1 2; do for s in 0 1; do
  row "combine_async=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_COMBINE_ASYNC=$s
  row "combine_async=$s" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_COMBINE_ASYNC=$s; done; done
for s in 0 1; do row "combine_async=$s d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_COMBINE_ASYNC=$s; done
echo "end t=$(el)"
