#!/bin/bash
# next197 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next197.sh  (timeout 360)
# -- moe_gate's router row into registers before the PDL wait (branch wip/router-ahead = new; its loads went out after
# the wait, the row only prefetched into L2 before it) against round 33's landed main d463625 (base). Prediction:
# Qwen3-30B-A3B and Qwen3.6-35B-A3B +0.5-1.5 % (one L2 round trip, ~0.3-0.6 us, off each MoE layer's router).
source tools/wip/lib.sh
begin next197
kc next197 moe
check_rows next197 moe 'moe_gate'
ab "-p 16 -r 3" qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M
echo "end t=$(el)"
