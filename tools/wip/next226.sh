#!/bin/bash
# next226 (carry .carry: bench + kernel check of wip/combine-async d71c901 as build-new, whose diff is
# tools/wip/patches/combine-async.patch; bench of wip/gateup-heads 301c670 as build-heads; the kernel trace):
# bash tools/wip/next226.sh SHA --
# 1. the routed down + combine with its Q4_K / Q6_K weights copied into shared memory by cp.async right after the
#    expert id, before the activations are staged (round 38's stamps: the weights started 1.1 us after the wait). The
#    moe family (its "moe down + combine" rows say "weights by cp.async" where the async kernel ran, bit-equal to the
#    routed store launch + moe_combine), then one binary A/B (BW24_COMBINE_ASYNC=0 = main's combine).
# 2. round 38's one-wave gate-up (+0.6 %) traced against the four-CTA kernel: where the second wave's ~3 us went.
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
echo "A/B done t=$(el)"
for s in 0 1; do TRACE_BUILD=heads TRACE_LINES=14 TRACE_POS=10 trace_row 30b-ow$s qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" \
  BW24_GATE_UP_ONE_WAVE=$s; done
TRACE_LINES=14 TRACE_POS=10 trace_row 30b-async1 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_COMBINE_ASYNC=1
echo "end t=$(el)"
