#!/bin/bash
# next70 (carry .carry only):  bash tools/wip/next70.sh SHA  (timeout_s 400)
# new = wip/one-head: flash decode's split kernel with the CTA's head count a template parameter, the one-head
# instance taken where head groups leave one head a CTA (every short history of the Qwen3 shapes); base = main
# 1eaff52's device code (f940b3a's binary).
# Why (round 15): after head groups a one-head CTA still walks kMaxGroup = 8 predicated heads in its score, P V and
# sum loops (~1,000 instructions a warp at ~19 cycles each, ncu); the one-head instance has 64 registers, not 111.
# 1. Kernel check attention / attention_rope / attention_bound (the same bits as the generic instance: every grouping
#    against the call's choice), GPU tests.
# 2. Prediction: flash decode ~6.8 -> ~5.5 us a short-history layer: 30B 448 -> ~460, 8B 429 -> ~435, 35B-A3B +2 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
P="-p 16 -n 128 -r 3 -d 0"
ab "$P" qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M
echo "t=$(el)"
for b in base new; do [ $(el) -lt 300 ] && row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ $(el) -lt 330 ] && timeout 45 $ncu --clock-control none -k regex:"split_kernel" --launch-skip 300 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 16 -r 1 -d 0 --device 0 > "$OUT/ncu-$SHA.txt" 2>&1
grep -E "Duration|Registers Per|Warp Cycles Per Issued" "$OUT/ncu-$SHA.txt" | head -6
echo "end t=$(el)"
