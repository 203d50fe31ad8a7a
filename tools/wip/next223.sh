#!/bin/bash
# next223 (round 38; carry .carry: bench + kernel check of 5789251, .carry/trace): bash tools/wip/next223.sh SHA -- the
# cluster router's top-k by the whole CTA (cta_route). The moe family (its cluster and norm rows compare against
# gate_kernel's warp_route and rmsnorm_q8 bit for bit), one binary A/B (BW24_CTA_ROUTE=0 = warp_route), a trace of the
# 30B step with it, then the acceptance rows of the MoE shapes.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe_gate cluster'
check_rows $SHA moe 'moe_gate norm'
for i in 1 2; do for s in 0 1; do
  row "cta_route=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_CTA_ROUTE=$s
  row "cta_route=$s" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_CTA_ROUTE=$s; done; done
TRACE_POS=10 trace_row 30b-cta1 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_CTA_ROUTE=1
json $SHA 480 qwen3-30b-a3b:Q4_K_M ""
json $SHA 520 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
