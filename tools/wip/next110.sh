#!/bin/bash
# next110 (carry .carry only): bash tools/wip/next110.sh SHA  (timeout 230)
# new = wip/kq-stages SHA (64cffd3). next109 had Qwen3-30B-A3B 504.7 -> 517.2 with 5 Q4_K stages (2 CTAs an SM) but
# Qwen3.5-9B 454.1 -> 443.7 and Qwen3-8B +0.3 %: the 30B's streamed Q4_K launches are Q, K, V (K = 2048: 8 of a
# 16-block piece used) and O. Second samples, the 35B (hidden 2048), then the 8B's kernel times (ncu, serialized) for
# the next round's plan.
SHA=$1
source tools/wip/lib.sh
begin $SHA
A="-p 16 -n 128 -r 3"
for n in 0 5 0 5; do row st=$n new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_KQ_STAGES=$n; done
for n in 0 5; do row st=$n new qwen3.6-35b-a3b:Q4_K_M tg128 "$A" BW24_KQ_STAGES=$n; done
echo "t=$(el)"
[ $(el) -lt 110 ] && NCU_RANGE="--launch-skip 3000 --launch-count 700" breakdown 8b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
echo "end t=$(el)"
