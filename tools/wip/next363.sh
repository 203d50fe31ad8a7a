#!/bin/bash
# next363 (round 63): main (ca016f3) traced at depth 4096 and at depth 0, Qwen3-8B Q4_K_M: where depth 4096's step goes,
# for the depth ratio (85.2-85.4 %, at its bar).
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench (main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-trace-depth
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-d4096 qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1"
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
echo "end t=$(el)"
