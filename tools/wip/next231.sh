#!/bin/bash
# next231 (carry .carry: main b32dcb0's bench as "base", wip/router-fast's bench and kernel check as "new"):
# bash tools/wip/next231.sh SHA -- the cluster router's products reduced side by side and CTA 0 routing with all its
# threads (cta_route): the moe kernel check (cluster rows incl. ties bit-equal to gate_kernel's warp_route), then
# tg128 A/B on both MoE shapes, two rounds alternated, and the 30B at depth 4096.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster' 'moe_gate norm'
ab "-p 16 -n 128 -r 2" qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M
for b in base new; do row $b-d4096 $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
echo "end t=$(el)"
