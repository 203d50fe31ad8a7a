#!/bin/bash
# next372 (round 64): the landing build (a337f2e) traced at depth 0 and 4096, Qwen3-8B Q4_K_M, for round 65's start.
SHA=$1
source tools/wip/lib.sh
begin $SHA-trace
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
TRACE_POS=0 TRACE_LINES=18 trace_row 8b-d4096 qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1"
echo "end t=$(el)"
