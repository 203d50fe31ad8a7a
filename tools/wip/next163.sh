#!/bin/bash
# next163 (carry .carry only): bash tools/wip/next163.sh SHA  (timeout 580) -- round 29's first call: the three patches
# prepared in round 28 together (branch wip/combo = main d56ee63 + tools/wip/patches/{early-release,add-residual-ahead,
# review-load-values}.patch). Kernel check of every family they touch (gemv_q8 = gemv_q8 / _multi / _streamed,
# gemv_float, the attention families, qk_rope); tg128 A/B base (main's bench = 4286274's device code) against new.
# Only early-release and load-values run in a one-token decode step (add-residual-ahead is the 2-8 token add GEMVs).
# Expect: every check ok, the streamed rows' errors as next160's (same sums in the same order). Prediction: Qwen3-8B
# Q4_K_M tg128 +1-3 %, Qwen3.5-9B +1-2 %, Qwen3-30B-A3B +0.5-1 %; load-values alone: no change.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8 gemv_float attention attention_rope attention_bound qk_rope
check_rows $SHA gemv_q8 'head groups'
for i in 1 2; do for b in base new; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 480 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in base new; do [ $(el) -lt 530 ] && row $b-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
echo "end t=$(el)"
