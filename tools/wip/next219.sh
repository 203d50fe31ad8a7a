#!/bin/bash
# next219 (round 37; carry .carry: kernel check of main with the occupancy rows): bash tools/wip/next219.sh SHA --
# the moe family with its new "moe decode occupancy" rows (registers and CTAs an SM of the routed gate-up and combine).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
grep "occupancy" $OUT/kc-moe-$SHA.txt
echo "end t=$(el)"
