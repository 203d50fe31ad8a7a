#!/bin/bash
# next170 (carry .carry only): bash tools/wip/next170.sh SHA  (timeout 480) -- prepared in round 29, not run: the Q4_K streamed
# dot takes its high nibbles in place (byte & 0xF0, 16 x the nibble) and sums them with an unsigned x signed dp4a
# (dp4a.u32.s32), shifting the sum once: a mask a register instead of a shift and a mask (branch wip/nibble =
# tools/wip/patches/nibble-in-place.patch on main). The sum is exactly 16 x the old one (|sum| < 2^20), so same bits.
# Pack: tools/wip/pack-bins.sh base main bw24-bench; tools/wip/pack-bins.sh new wip/nibble bw24-bench bw24-kernel-check.
# Expect: gemv_q8_streamed all ok, bit-equal to main's rows (same integers). Prediction: Qwen3-8B / Qwen3.5-9B Q4_K_M tg128
# +0.3-0.8 % (7 of the dot's ~125 instructions), Qwen3-30B-A3B +0-0.3 % (its routed GEMVs are not streamed).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
ab "-p 16 -n 128 -r 3" qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M
echo "end t=$(el)"
