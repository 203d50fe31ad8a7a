#!/bin/bash
# next89 (carry .carry only):  bash tools/wip/next89.sh SHA  (timeout_s 230; ~270 s of device time were left)
# new = wip/k1 SHA (9e0707c): keys ahead for the one-head instance at D = 128 too (the short histories: every
# Qwen3-8B / 30B step below ~1,000 positions; f16 64 -> 94 registers, bf16 / q8_0 114, two CTAs an SM).
# base = main 6ab4586. Prediction: ~1 us a layer at depth 0 where round 17 gained 2.8 us at depth 4096 with a 4x
# longer split: Qwen3-8B f16 439 -> ~446 (+1.6 %), Qwen3-30B-A3B 470 -> ~480; depth 4096 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
A="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do [ $(el) -lt 150 ] && row $b $b qwen3-8b:Q4_K_M tg128 "$A"; done; done
for b in base new; do [ $(el) -lt 170 ] && row $b $b qwen3-8b:Q4_K_M tg128 "$A --kv q8_0"; done
for b in base new; do [ $(el) -lt 175 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$A"; done
echo "end t=$(el)"
