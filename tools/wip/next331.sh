#!/bin/bash
# next331 (round 59): branch wip/room-grid's BW24_ROOM_SLOTS (the O projection the router's room raised, sized for N
# slots: at two CTAs an SM its 256 CTAs do not all fit beside flash decode's 64 split CTAs at depth 0 (28,672
# registers each leave room for one O CTA), so its trigger, and the cluster router's launch, wait for the split
# CTAs to exit: next329's router lead is 0.7 us), in one binary, alternated. 0: main; 128 / 200: 128 CTAs of two.
# Pack: bash tools/wip/pack-bins.sh grid HEAD bw24-bench (on wip/room-grid).
SHA=$1
source tools/wip/lib.sh
begin $SHA-room-grid
for i in 1 2; do for n in 0 128; do row s$n grid qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROOM_SLOTS=$n; done; done
for n in 0 128; do row s$n grid qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_ROOM_SLOTS=$n; done
echo "end t=$(el)"
