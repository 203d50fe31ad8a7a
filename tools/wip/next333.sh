#!/bin/bash
# next333 (round 59): the review commit (cta_room cached per device, sm_limits' cache release / acquire; host code
# only) on the GPU: kernel check gemv_q8_room and moe, the 30B's tg128 with the room on and off.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check (on main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-review
kc $SHA gemv_q8_room moe; grep -h "room" "$OUT/kc-gemv_q8_room-$SHA.txt" "$OUT/kc-moe-$SHA.txt"
for v in 1 0; do row room$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROUTER_ROOM=$v; done
echo "end t=$(el)"
