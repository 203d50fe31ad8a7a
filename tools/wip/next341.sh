#!/bin/bash
# next341 (round 61, prepared in round 60, not run): wip/norm-fold with its chunk guard (aa7ee34): kernel check
# gemv_q8_streamed (its fold rows: without a norm against the host's int8 row, with 1 + w against rmsnorm_q8's), then
# main's bench (build-main) and the branch's (build-nfold) alternated, the branch with BW24_NORM_FOLD=0 and 1: does
# the fold gain against main, and does its off path cost by itself (next340's off rows read 1.4-1.8 % under main's)?
# Pack: bash tools/wip/pack-bins.sh main HEAD bw24-bench (on main), then
#   git checkout wip/norm-fold && bash tools/wip/pack-bins.sh nfold HEAD bw24-bench bw24-kernel-check && git checkout main.
SHA=$1
source tools/wip/lib.sh
begin $SHA-norm-fold-ab
KC_BUILD=nfold kc $SHA gemv_q8_streamed; grep -c "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt"
grep "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt" | grep -v " ok " | head -5
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for i in 1 2; do
  row main main $m tg128 "-p 512 -n 128 -r 2"
  for v in 0 1; do row nf=$v nfold $m tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
done; done
row main main qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row nf=1 nfold qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=1
echo "end t=$(el)"
