#!/bin/bash
# next123 (carry .carry only): bash tools/wip/next123.sh SHA  (timeout 540)
# next122's Qwen3-30B-A3B loss (mid 527.2 -> 511.1; next121 522.9 -> 507.6) is the streamed kernel's six-ahead staging
# or the combine's two-ahead, not the warp-per-row kernel (identical to main's there). Both variants drop next122's q8_0
# KV conversion (no change at depth 4096: 409.0 -> 409.7). mid = wip/r22 08dc9fd (the three round-trip changes);
# B = wip/r22b deda0c3 (main 0c48649 less the conversion, the combine's staging one pass again); C = wip/r22b SHA (B,
# and the streamed kernel's staging the plain loop where its rows fit one pass: every Qwen3-30B-A3B launch, Qwen3-8B's
# K = 4096 ones). Prediction: B = mid on the 30B if the combine was it; C = mid if the streamed form was; 8B Q4_K_M
# +1.5 % over mid in both (its gain is the K = 12,288 downs, three passes -> one).
SHA=$1
source tools/wip/lib.sh
begin $SHA
for f in gemv_q8_streamed moe; do timeout 120 ./build-C/bw24-kernel-check $f > "$OUT/kc-$f-$SHA.txt" 2>&1
  echo "kernel-check C $f rc=$? $(tail -n 1 $OUT/kc-$f-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$SHA.txt" | head -12; done
A="-p 16 -n 128 -r 3"
for i in 1 2; do for b in mid B C; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$A"; done; done
for i in 1 2; do for b in mid B C; do row $b $b qwen3-8b:Q4_K_M tg128 "$A"; done; done
for b in mid B C; do [ $(el) -lt 330 ] && row $b $b qwen3-8b:Q8_0 tg128 "$A"; done
echo "t=$(el)"
jsonb() { local b=$1 m=$2; [ $(el) -lt 480 ] || return 0
  timeout 60 ./build-$b/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$b-${m/:/-}-h200.json" | grep -E "pp512|tg128" | sed "s/^/$b /"; }
for b in C B; do jsonb $b qwen3-30b-a3b:Q4_K_M; jsonb $b qwen3-8b:Q4_K_M; done
echo "end t=$(el)"
