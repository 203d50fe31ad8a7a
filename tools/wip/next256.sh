#!/bin/bash
# next256 (round 45): next255's fold traced (the fold on / off, one Qwen3-8B Q4_K_M layer's kernels), carry .carry
# with next255's bins and .carry/trace.
SHA=$1
source tools/wip/lib.sh
begin $SHA-trace
TRACE_POS=12 TRACE_LINES=16 trace_row fold qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
TRACE_POS=12 TRACE_LINES=16 trace_row fold0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FOLD_O=0
echo "end t=$(el)"
