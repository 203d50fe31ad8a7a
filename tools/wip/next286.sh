#!/bin/bash
# Correction (round 52): bw24-bench's tg rows decode at positions 1-128 whatever -p is, not at 512-639, so the
# 3..8-split paths named below never ran in these rows (docs/performance.md, round 52; next291 uses -d 512).
# Prepared in round 51, not run (the session's device time was spent). Pack from branch wip/trigger-multi:
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check   (on that branch, clean tree)
# next286 (round 52): round 51 landed flash decode's trigger after its wait for tokens that see at most two splits
# (+1.4 % Qwen3-8B at positions 16-143) and found no gain at 5-6 splits (positions 512-639, the acceptance command's
# tg128). BW24_FLASH_TRIGGER_MULTI for tokens with 3..8 visible splits: 0 = trigger first (main), 1 = after the wait,
# 2 = once the P V sums are in shared memory (the K / V reads done, the partial stores and the last CTA's merge left).
# Also BW24_TRIG_GDN=1 (the delta net's decode kernel after its wait) again on the 9B and the 35B, alternated, since
# round 51 measured it +0.7 % on the 35B and -0.7 % on the 9B in single rows.
# Prediction: MULTI=2 -0.5 to +1 % at positions 512-639 (the O projection's first stages need ~2-3.5 us to land, the
# chain after P V is ~2-3 us); MULTI=1 as round 51's next284 (-0.5 %).
SHA=$1
source tools/wip/lib.sh
begin $SHA-trigger-multi
BW24_FLASH_TRIGGER_MULTI=2 kc_one $SHA attention attention_rope
for i in 1 2; do for m in 0 1 2; do
  row multi$m new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_TRIGGER_MULTI=$m; done; done
for m in 0 2; do row multi$m new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_TRIGGER_MULTI=$m; done
for i in 1 2; do for g in 0 1; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row gdn$g new $m tg128 "-p 16 -n 128 -r 2" BW24_TRIG_GDN=$g; done; done; done
echo "end t=$(el)"
