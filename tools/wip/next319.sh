#!/bin/bash
# next319 (prepared in round 57, not run): why the merge a CTA per (head, 32-dim block) gains on Qwen3-8B and loses
# on Qwen3-30B-A3B at depth 4096 (next318: +0.7 % / -1.3 %). The branch's bench traced (tools/trace) with
# BW24_MERGE_BLOCKS=0 and 1 on both shapes: the merge's segment and lead, the O projection's lead, the split kernel's
# segment. Pack: bash tools/wip/pack-bins.sh new wip/merge-blocks bw24-bench (HEAD on the branch, clean tree), and
# the CUPTI library and build-pack/SHA/libbw24-kernel-trace.so as .carry/bins/trace--NAME.xz (xz -9e), as next316.
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-blocks-traced
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for v in 0 1; do
  TRACE_LAYER_ROWS=12 TRACE_POS=8 trace_row ${m%%:*}-blocks$v $m "-p 16 -n 128 -d 4096 -r 1" BW24_MERGE_BLOCKS=$v
done; done
echo "end t=$(el)"
