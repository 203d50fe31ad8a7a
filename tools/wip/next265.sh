#!/bin/bash
# next265 (round 47): the cluster router requests its picks' gate / up (/ down) slices into L2 right after its
# top-k (branch wip/router-prefetch, BW24_ROUTER_PREFETCH=1 / 2; 0 = main's step, the same binary). Carry .carry with
# new--bw24-bench and new--bw24-kernel-check. Prediction: the routed gate-up's DRAM reads lead by the router's tail
# and the boundary (~1-1.5 us), of the ~2 us that hot experts save it alone (next264): 30B 656 -> ~670-685;
# the down slices too (=2) compete with the gate-up's reads: expected no better than =1. =3: gate / up from the router,
# the down slices from the int8 launch before the down (its wait passed: DRAM idle but for them); =4 the latter only.
SHA=$1
source tools/wip/lib.sh
begin $SHA-router-prefetch
kc $SHA moe
check_rows $SHA moe 'moe_gate prefetch'
check_rows $SHA moe 'moe down slices into L2'
for ps in "0 1 2 3 4" "0 1 3 4"; do for p in $ps; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row "pf$p" new $m tg128 "-p 16 -n 128 -r 2" BW24_ROUTER_PREFETCH=$p; done; done; done
for p in 0 3; do row "pf$p-d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_ROUTER_PREFETCH=$p; done
for p in 0 3; do TRACE_POS=6 trace_row 30b-pf$p qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_ROUTER_PREFETCH=$p; done
echo "end t=$(el)"
