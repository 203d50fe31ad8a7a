#!/bin/bash
# next235 (carry .carry: wip/router-stamps2 decbd1b's bench and kernel check as "new": main's router with
# router-stamps.patch re-applied and BW24_ROUTER_ONE_WAY): bash tools/wip/next235.sh SHA -- where the faster router's
# segment goes now (BW24_STAMPS=1 medians), and the logits sent into CTA 0 by st.async on an mbarrier instead of the
# cluster barrier (BW24_ROUTER_ONE_WAY=1): its kernel check (bit-equal cluster rows) and tg128 A/B.
SHA=$1
source tools/wip/lib.sh
begin $SHA
BW24_ROUTER_ONE_WAY=1 kc ${SHA}-ow moe; check_rows ${SHA}-ow moe 'moe_gate cluster'; check_rows ${SHA}-ow moe 'moe_gate norm'
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do for ow in 0 1; do
  BW24_ROUTER_ONE_WAY=$ow BW24_STAMPS=1 timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 |
    grep -E "stamps|cycles" | sed "s/^/$m ow=$ow /"
done; done
for i in 1 2; do for ow in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row ow$ow new $m tg128 "-p 16 -n 128 -r 2" BW24_ROUTER_ONE_WAY=$ow; done; done; done
echo "end t=$(el)"
