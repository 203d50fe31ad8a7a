#!/bin/bash
# next171 (carry .carry only): bash tools/wip/next171.sh SHA  (timeout 580) -- round 29's prepared next169 and next170 in one call (both removed since).
# Programs: old = d93bff5 (round 22, BF16 JSON 220.9), base = dba9642 (main's device code), new = wip/nibble2 (main +
# tools/wip/patches/nibble-in-place.patch). pack-bins.sh old d93bff5; base from build-pack/dba9642; pack-bins.sh new
# wip/nibble2 bw24-bench bw24-kernel-check.
# Expect (BF16): old ~5 tok/s above base in the same call -> a change of rounds 23-29 cost BF16; alike -> the calls'
# machines. Nibble: gemv_q8_streamed all ok; Qwen3-8B / Qwen3.5-9B Q4_K_M tg128 +0.3-0.8 %, Qwen3-30B-A3B +0-0.3 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
for i in 1 2; do for b in old base; do [ $(el) -lt 300 ] && row $b $b qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2"; done; done
ab "-p 16 -n 128 -r 3" qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M
[ $(el) -lt 540 ] && row old old qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
echo "end t=$(el)"
