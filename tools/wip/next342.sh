#!/bin/bash
# next342 (round 61): wip/norm-tmpl, the norm fold as a kernel instance of its own (kNormIn): kernel check
# gemv_q8_streamed, then main's bench (build-main, 6bb5686) against the branch's (build-ntmpl) with
# BW24_NORM_FOLD=1 alternated (and =0 once a model: the int8 instances' resources equal main's, cuobjdump).
# Pack: bash tools/wip/pack-bins.sh ntmpl HEAD bw24-bench bw24-kernel-check (on the branch).
SHA=$1
source tools/wip/lib.sh
begin $SHA-norm-tmpl-ab
KC_BUILD=ntmpl kc $SHA gemv_q8_streamed; grep -c "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt"
grep "in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt" | grep -v " ok " | head -5
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row nt=0 ntmpl $m tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0
  for i in 1 2; do
    row main main $m tg128 "-p 512 -n 128 -r 2"
    row nt=1 ntmpl $m tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=1
  done
done
for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row main main $m tg128 "-p 512 -n 128 -r 2"
  row nt=1 ntmpl $m tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=1
done
echo "end t=$(el)"
