#!/bin/bash
# next301 (round 54): next300 found flash decode's q8_0 score phase 2.8 us against f16's 0.8 (Qwen3-8B, depth 0). The
# only loads there are the token's own key, reloaded after the writer's barrier. BW24_FD_EXP on the timing build:
# 1 the own key not reloaded (stale, timing only), 2 only its quants reloaded, 4 only its scales.
SHA=$1
source tools/wip/lib.sh
begin $SHA-q8-own-key
t() { echo "== $1 EXP=$2"; BW24_FD_EXP=$2 BW24_FLASH_TIMING=1 timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -r 2 --kv $1 --device 0 2>&1 | grep -E "tg128|calls of 32|scores|softmax|P V|O /" | head -6; }
t f16 0; for x in 0 1 2 4; do t q8_0 $x; done
echo "end t=$(el)"
