#!/bin/bash
# next237 (prepared 2026-12-02, not run; carry .carry: "base" = main ce7971d's bench, "ow" = wip/one-way 7818399
# (tools/wip/patches/router-one-way.patch), "tight" = wip/route-tight 0469f53 (router-one-way.patch +
# route-tight.patch) and its kernel check as "new"): bash tools/wip/next237.sh SHA -- the router's next two steps:
# the logits handed to CTA 0 one way, then cta_route's loads at once and CTA 0's slice after its route. Kernel check
# moe (the cluster rows one way and through the barrier, bit-equal to gate_kernel), tg128 A/B of the three builds on
# both MoE shapes, two rounds alternated, then tight's JSON rows.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster' 'cluster barrier'
for i in 1 2; do for b in base ow tight; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row $b $b $m tg128 "-p 16 -n 128 -r 2"; done; done; done
JSON_BUILD=tight json $SHA 450 qwen3-30b-a3b:Q4_K_M ""
JSON_BUILD=tight json $SHA 500 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
