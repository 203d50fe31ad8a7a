#!/bin/bash
# next109 (carry .carry only): bash tools/wip/next109.sh SHA  (timeout 300)
# new = wip/kq-stages SHA (main b5505e2 + BW24_KQ_STAGES=N: Q4_K / Q5_K streamed rings of N stages). Q8_0 gained from
# 2 CTAs an SM of 3 x 34.8 KB stages (209 KB in flight an SM) over 3 CTAs of 3 x 17.4 KB (157 KB); Q4_K runs 3 CTAs of
# 3 x 18.4 KB (166 KB). 4 stages (2 CTAs an SM, 147 KB) and 5 (2 CTAs, 184 KB; no room for a successor CTA).
# Prediction: 5 stages +2-4 % on Qwen3-8B Q4_K_M if bytes in flight set the rate, as for Q8_0.
SHA=$1
source tools/wip/lib.sh
begin $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for n in 0 4 5; do row st=$n new qwen3-8b:Q4_K_M tg128 "$A" BW24_KQ_STAGES=$n; done; done
for n in 0 4 5; do row st=$n new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_KQ_STAGES=$n; done
for n in 0 5; do row st=$n new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_KQ_STAGES=$n; done
echo "end t=$(el)"
