#!/bin/bash
# next192 (carry .carry without trace; prepared in round 32, not run): bash tools/wip/next192.sh SHA  (timeout 560)
# -- flash decode's merge kernel polling the slot's ready stamp instead of waiting for the whole split grid (branch
# wip/merge-poll 4b55e03, tools/wip/patches/merge-poll.patch; its binaries were packed from 26dacc2, the same device code before a rebase). Round 32 found the 8B's depth cost all attention's own
# (BW24_ABLATE=attn: 9.4 us a layer at depth 4096) and the merge launch 4.5-4.8 us of it (next185's trace); the last
# CTA merging inline lost (next186: one SM a KV head). Here the merge kernel keeps its 32 CTAs but starts when the
# last split CTA of its slot publishes the stamp, not when the split grid has completed and flushed. Packed in round
# 32: .carry/bins holds new = the branch (bench, kernel check) and base = main 63ba9fb's bench; the branch's GPU tests
# wait in .carry/held (move them to .carry/bins for a second call: all of them at once pass the 64 MiB carry). Checks
# first, each under a timeout (a stamp never published would hang the poll). Prediction: Qwen3-8B f16 at depth 4096 +1-3 %
# (0.5-1.5 us a layer), depth 0 unchanged (no merge launch below 1,024 positions in the captured step).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'head groups'
check_rows $SHA attention 'header at zero'
ab_depth
echo "end t=$(el)"
