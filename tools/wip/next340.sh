#!/bin/bash
# next340 (round 60): wip/norm-fold: the streamed GEMV normalizes and quantizes a one-token f32 input itself
# (ActQ8::f32 with the norm weight), so the attention norm's rmsnorm_q8 launch (and the dense FFN norm's) goes.
# One binary, BW24_NORM_FOLD=0/1 alternated: the 8B and the 30B, kernel check gemv_q8_streamed (the fold's rows
# bit-equal to rmsnorm_q8 + the staged launch), then second rounds while time is left.
# Pack: bash tools/wip/pack-bins.sh nfold HEAD bw24-bench bw24-kernel-check (on wip/norm-fold).
SHA=$1
source tools/wip/lib.sh
begin $SHA-norm-fold
for v in 0 1; do row nf=$v nfold qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
for v in 0 1; do row nf=$v nfold qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
KC_BUILD=nfold kc $SHA gemv_q8_streamed; grep -c "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt"
grep "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt" | grep -v " ok " | head -5
[ $(el) -lt 200 ] && for v in 0 1; do row nf=$v nfold qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
[ $(el) -lt 220 ] && for v in 0 1; do row nf=$v nfold qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
[ $(el) -lt 230 ] && for v in 0 1; do row nf=$v nfold qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=$v; done
echo "end t=$(el)"
