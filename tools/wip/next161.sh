#!/bin/bash
# next161 (carry .carry only): bash tools/wip/next161.sh SHA  (timeout 560) -- prepared in round 28, not yet run: the Q4_K
# streamed consumers read an item's bytes from the stage into registers, release the stage, then do the sums (branch
# wip/early-release = tools/wip/patches/early-release.patch on main 5268fd6; Q4_K only: Q5_K's five registers a block
# spilled 48-120 bytes, ptxas). SASS of the Q4_K store instance: the stage wait, 6 LDS.128, the empty-barrier arrive, then
# the activations and the dp4a. Why: round 28's producer change (its refill ~40 instructions sooner) gave +1.1-1.4 %, so the
# refill of a released stage sits on the critical path; this releases it an item's arithmetic (~200 instructions) sooner.
# base = main's bench, new = the branch's bench and kernel check. Pack (on the branch, clean tree): tools/wip/pack-bins.sh new
# HEAD bw24-bench bw24-kernel-check; and base--bw24-bench.xz from main's pack. Expect: kernel check gemv_q8_streamed all ok,
# every row's error as next160's (same sums in the same order). Prediction: Qwen3-8B Q4_K_M tg128 +1-3 %, Qwen3.5-9B +1-2 %,
# Qwen3-30B-A3B +0.5-1 % (Q4_K attention launches only), BF16 / Q8_0 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
for i in 1 2; do for b in base new; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 420 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in base new; do [ $(el) -lt 480 ] && row $b $b qwen3-8b:Q8_0 tg128 "-p 16 -n 128 -r 2"; done
echo "end t=$(el)"
