#!/bin/bash
# next300 (round 54): where flash decode's q8_0 instance loses ~2 us a Qwen3-8B layer against f16 at depth 0
# (next299: tg128 570 against 595; with flash decode left out both 627). Timing build (round 51's stamps on
# wip/kv-blocks), BW24_FLASH_TIMING=1: phases of the split CTAs, f16 against q8_0.
SHA=$1
source tools/wip/lib.sh
begin $SHA-fd-timing
for kv in f16 q8_0; do echo "== $kv"; BW24_FLASH_TIMING=1 timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -r 2 --kv $kv --device 0 2>&1 | grep -E "tg128|flash timing|^  " | head -30; done
echo "end t=$(el)"
