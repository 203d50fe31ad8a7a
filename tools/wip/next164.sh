#!/bin/bash
# next164 (carry .carry only): bash tools/wip/next164.sh SHA  (timeout 560) -- round 29's second call. new = branch
# wip/land1 (main + review-load-values + add-residual-ahead + the kWhole cut: a launch of several segments, each of whole
# row groups and pieces -- Qwen3's Q + K, Qwen3.5's in_qkv + in_z + in_b + in_a -- takes its items' row and block counts as
# constants, the segment by compares; BW24_AB_NO_WHOLE=1 puts those launches back on the general cut, the A/B toggle,
# host only). base microbench = main + the microbench's token count (wip/micro-base).
# Expect: gemv_q8_streamed / gemv_q8_multi all ok. Prediction: kWhole Qwen3-8B / 30B +0.3-0.6 % (Q + K ~4-5 us a layer,
# ~15 % of its instructions), Qwen3.5-9B +0.3-0.6 %; add-residual-ahead: gemv_q8/Q4_K 4096 x 4096 add at 8 tokens -1-3 us,
# at 2 tokens -0.2-0.5 us, 1 token unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
for i in 1 2; do for b in off on; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  if [ $b = off ]; then e=BW24_AB_NO_WHOLE=1; else e=BW24_AB_UNUSED=1; fi
  [ $(el) -lt 400 ] && row whole-$b new $m tg128 "-p 16 -n 128 -r 3" $e; done; done; done
for b in base new base new; do [ $(el) -lt 500 ] && timeout 60 ./build-$b/bw24-microbench --benchmark_filter='gemv_q8/Q4_K' 2>&1 |
  grep -E "gemv_q8" | sed "s/^/$b /"; done
echo "end t=$(el)"
