#!/bin/bash
# next67 (carry .carry only):  bash tools/wip/next67.sh  (< 8 min; timeout_s 560)
# Where a decode step's time goes on main's device code (base = 4c243d7, the same kernels as dd5e1f0), after
# rounds 12-14 changed flash decode, the O input and the MoE launches (the last per-kernel table is round 11's):
# 1. BW24_ABLATE rows of the Qwen3-30B-A3B attention block (norm, qkv, attn, o) and the lm_head, beside the whole step
#    and the MoE block (round 14: 22.9 us a MoE layer; the rest of the step ~25 us a layer for ~10 MB of weights).
# 2. The same for Qwen3-8B Q4_K_M (qkv, attn, o, gateup, down, norm, lmhead).
# 3. Per-kernel serialized times (ncu gpu__time_duration, a window of ~2 steps) for both.
source tools/wip/lib.sh
begin next67
P="-p 16 -n 128 -r 3 -d 0"
for a in "" norm qkv attn o lmhead moe; do row "30b-abl=${a:-none}" base qwen3-30b-a3b:Q4_K_M tg128 "$P" BW24_ABLATE=$a; done
echo "t=$(el)"
for a in "" norm qkv attn o gateup down lmhead; do row "8b-abl=${a:-none}" base qwen3-8b:Q4_K_M tg128 "$P" BW24_ABLATE=$a; done
echo "t=$(el)"
NCU_RANGE="--launch-skip 3000 --launch-count 700" breakdown 8b dd5e1f0 ./build-base/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
[ $(el) -lt 420 ] && NCU_RANGE="--launch-skip 4000 --launch-count 800" breakdown 30b dd5e1f0 ./build-base/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
echo "end t=$(el)"
