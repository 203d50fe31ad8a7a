#!/bin/bash
# next306 (round 54): next303 found flash decode's q8_0 score phase 2 us longer than f16's unless the writer's tail
# is left out. Which warp holds the score barrier: each warp's arrival at the rope and score barriers (timing build
# 8f0ee76 = tools/wip/patches/q8-writer-timing.patch on a8c2c5a, BW24_FLASH_TIMING=1), f16 against q8_0, Qwen3-8B Q4_K_M depth 0; and BW24_FD_EXP=256, the writer as the
# last warp (no keys of its own below position 112), f16 and q8_0.
SHA=$1
source tools/wip/lib.sh
begin $SHA-warp-arrivals
for kx in f16:0 q8_0:0 q8_0:256 f16:256; do kv=${kx%%:*}; echo "== $kx"; BW24_FD_EXP=${kx##*:} BW24_FLASH_TIMING=1 timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -r 2 --kv $kv --device 0 2>&1 | grep -E "tg128|warp|scores" | head -14; done
for kx in f16:0 q8_0:0 q8_0:256; do kv=${kx%%:*}; echo "== depth 4096 $kx"; BW24_FD_EXP=${kx##*:} BW24_FLASH_TIMING=1 timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 0 -d 4096 -n 128 -r 2 --kv $kv --device 0 2>&1 | grep -E "tg128|warp|scores|calls" | head -24; done
echo "end t=$(el)"
