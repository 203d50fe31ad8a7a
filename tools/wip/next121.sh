#!/bin/bash
# next121 (carry .carry only): bash tools/wip/next121.sh SHA  (timeout 580)
# Round 22: round 21's prepared next119 + next120, rewritten on a fresh checkout (their wip branches were lost).
# base = main 752b0f1's bench; mid = wip/r22 08dc9fd's bench (three changes, next119's: rmsnorm_q8's own element beside
# the sum of squares, gemv_q8_combine's inputs beside its staging, flash decode's merge kernel in one round trip at
# depth 4096); new = wip/r22 0450255 (mid + stage_q8_rows six ahead, next120's), bench and kernel check packed from its clean
# HEAD. Predictions: mid 8B Q4_K_M +1-1.7 %, MoE +2 %, depth-4096 rows a further ~+2.4 % (q8_0-KV ratio 89.8 -> ~91 %);
# new over mid: 8B Q4_K_M +1.4 %, Q8_0 +3-4 %, 30B +1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm moe attention gemv_q8_streamed gemv_q8_multi
check_rows $SHA rmsnorm 'combine'
check_rows $SHA rmsnorm 'pos 17000'
# GPU tests: in the landing call (their programs would put this carry over 64 MiB)
A="-p 16 -n 128 -r 3"; D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in base mid new; do row $b $b qwen3-8b:Q4_K_M tg128 "$A"; done; done
for i in 1 2; do for b in base mid new; do row $b $b qwen3-8b:Q8_0 tg128 "$A"; done; done
echo "t=$(el)"
for b in base mid new; do row "$b d4096 kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done
for b in base mid new; do [ $(el) -lt 470 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$A"; done
for b in base new; do [ $(el) -lt 500 ] && row $b $b qwen3.5-9b:Q8_0 tg128 "$A"; done
for b in base new; do [ $(el) -lt 530 ] && row "$b d4096" $b qwen3-8b:Q4_K_M tg128 "$D"; done
[ $(el) -lt 470 ] && kc $SHA gemv_q8
echo "end t=$(el)"
