#!/bin/bash
# next166 (carry .carry only): bash tools/wip/next166.sh SHA  (timeout 480) -- round 29's last call. new = branch wip/scale2
# (main a46a5c0 + the Q4_K / Q5_K scale decode by selects: scale_min_k4_pair's lane-dependent if / else made every warp
# run both sides behind BSSY / BSYNC, 12 BRA and 6 BSSY fewer per streamed Q4_K instance in the SASS; + the host toggle
# BW24_AB_NO_WHOLE), base = main a46a5c0's bench. Also: the BF16 Q, K, V launch (three whole segments) now takes the kWhole
# cut, not measured in next164: BF16 rows of new with the toggle off / on.
# Expect: gemv_q8 and moe checks all ok (same values). Prediction: scale by selects Qwen3-8B / 9B Q4_K_M +0.3-0.8 %;
# kWhole on BF16 within noise.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8 moe
for i in 1 2; do for b in base new; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  [ $(el) -lt 300 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for e in off on off on; do
  if [ $e = off ]; then v=BW24_AB_NO_WHOLE=1; else v=BW24_AB_UNUSED=1; fi
  [ $(el) -lt 400 ] && row bf16-whole-$e new qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2" $v; done
echo "end t=$(el)"
