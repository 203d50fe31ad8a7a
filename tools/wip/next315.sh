#!/bin/bash
# next315 (prepared in round 56): warp_max as one order-preserving redux.sync max (branch wip/warp-max-redux,
# tools/wip/patches/warp-max-redux.patch; the same values as the shuffle tree for inputs without a NaN): flash
# decode's softmax (every position), its inline merge (129-1,024) and the MoE routers' max; and cta_route's softmax
# sum by step 2's idle warp (the same order, the same bits; BW24_ROUTE_SUM_EARLY=0 in the branch's binary leaves it
# out). Kernel checks attention, attention_rope, moe, then tg128 rows, main's bench (base) against the branch's (new),
# alternated. Pack:
#   bash tools/wip/pack-bins.sh base main bw24-bench
#   bash tools/wip/pack-bins.sh new wip/warp-max-redux bw24-bench bw24-kernel-check
# (where the branch is gone: main 0040bdd or later with the patch applied, committed on a branch)
SHA=$1
source tools/wip/lib.sh
begin $SHA-warp-max-redux
kc_one $SHA attention attention_rope moe
ab "-p 512 -n 128 -r 2" qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M
for b in base new; do
  row $b-d512 $b qwen3-8b:Q4_K_M tg128 "-p 0 -d 512 -n 128 -r 2"
done
row new-no-sum-early new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROUTE_SUM_EARLY=0
echo "end t=$(el)"
