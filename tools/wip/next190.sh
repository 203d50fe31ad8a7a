#!/bin/bash
# next190 (carry .carry without trace): bash tools/wip/next190.sh SHA  (timeout 330) -- the delta net's one-token
# decode step writes its recurrent state and conv history as soon as they are final (branch wip/gdn-early-store), so
# their 64 KB a head drain under the norm and the int8 output (a grid completes when its stores have); typed instance
# 1,240 -> 1,128 SASS instructions. build-base = main 63ba9fb's bench, build-new = the branch (bench + kernel check).
# Prediction: Qwen3.5-9B +0.3-0.8 % (24 delta-net layers, ~0.3 us each).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gdn
for i in 1 2; do for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done; done
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done
echo "end t=$(el)"
