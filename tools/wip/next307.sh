#!/bin/bash
# next307 (round 55): next306 found the q8_0 writer warp at the rope barrier 1.8 us after the others and every warp's
# score phase 2 us longer than f16's. Timing build 2dcf446 (8f0ee76 + per-warp score-phase stamps and the writer's own
# stamps): f16 and q8_0 at depth 0, q8_0 with the writer's tail left out (EXP=64), Qwen3-8B Q4_K_M.
SHA=$1
source tools/wip/lib.sh
begin $SHA-phase-stamps
for kx in f16:0 q8_0:0 q8_0:64 q8_0:128; do kv=${kx%%:*}; echo "== $kx"; BW24_FD_EXP=${kx##*:} BW24_FLASH_TIMING=1 timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -r 2 --kv $kv --device 0 2>&1 | grep -E "tg128|warp|phase|writer|scores|rope" | head -30; done
echo "end t=$(el)"
