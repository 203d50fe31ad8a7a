#!/bin/bash
# next232 (carry .carry: as next231, plus .carry/trace): bash tools/wip/next232.sh SHA -- next231 measured no change
# from the faster router route; the Qwen3-30B-A3B step traced on both builds (the router's and the gate-up's segments).
SHA=$1
source tools/wip/lib.sh
begin $SHA
for b in base new; do TRACE_BUILD=$b TRACE_POS=12 TRACE_LINES=14 trace_row 30b-$b qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1"; done
for b in base new; do TRACE_BUILD=$b TRACE_POS=0 TRACE_LINES=14 trace_row 35b-$b qwen3.6-35b-a3b:Q4_K_M "-p 16 -n 128 -r 1"; done
echo "end t=$(el)"
