#!/bin/bash
# next312 (round 55): is a latency-bound launch's time its code's? The MoE combine's image dot with its four rows in a
# loop, not unrolled (branch wip/combine-rolled: Q6_K 2,168 -> 1,888 SASS instructions, Q4_K 1,272 -> 1,112; same
# bits). Kernel check moe, then Qwen3-30B-A3B tg128, main's bench (base) against the branch's (new), alternated.
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-rolled
kc_one $SHA moe
for i in 1 2; do for b in base new; do
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done; done
echo "end t=$(el)"
