#!/bin/bash
# next186 (carry .carry only): bash tools/wip/next186.sh SHA  (timeout 480) -- flash decode's last CTA merging up to
# 64 visible splits (branch wip/wide-merge: a thread per pair of O elements, 16 splits' (m, l) and partials loaded a
# run, a running rescaled sum; the merge launch only past 8,192 positions). build-base = 884b882's bench (the
# attention code of main), build-new = the branch (bench + kernel check). next185's trace: at depth 4096 the merge
# launch was 4.5-4.8 us of a Qwen3-8B layer's ~14 us attention. Prediction: Qwen3-8B f16 depth 4096 +3-5 % (two to
# three L2 round trips in the last CTA instead of a launch boundary), depth 0 unchanged (one split: no merge).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'head groups'
grep -cE " ok " $OUT/kc-attention-$SHA.txt
for i in 1 2; do for b in base new; do
  row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
done; done
for b in base new; do
  row $b-q8 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0"
  row $b-d0 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
done
for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
echo "end t=$(el)"
