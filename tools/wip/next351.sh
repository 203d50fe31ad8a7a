#!/bin/bash
# next351 (round 62, diagnostic): what 32-row ownership costs the streamed add launches (the O projection and the
# down), the first half of a plan that would have them write the next norm's int8 blocks (branch wip/runs4:
# BW24_RUNS=N deals kAdd launches in runs of N row groups; 4: 128 CTAs for the 8B's 512 groups; 2: 256 CTAs as
# today, contiguous pairs). tg128 alternated, then RUNS=4 traced. Pack: bash tools/wip/pack-bins.sh new HEAD
# bw24-bench (on wip/runs4).
SHA=$1
source tools/wip/lib.sh
begin $SHA-runs
A="-p 512 -n 128 -r 2"
for i in 1 2; do for v in 0 4 2; do row runs=$v new qwen3-8b:Q4_K_M tg128 "$A" BW24_RUNS=$v; done; done
for v in 0 4; do row runs=$v new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_RUNS=$v; done
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
[ $(el) -lt 200 ] && TRACE_POS=12 TRACE_LAYER_ROWS=48 TRACE_LINES=14 trace_row 8b-runs4 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_RUNS=4
echo "end t=$(el)"
