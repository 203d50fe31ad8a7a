#!/bin/bash
# next353 (round 63): the folded norms (branch wip/fold-out): kernel check gemv_q8_norm_fold and gemv_q8_gate_up_q8
# (round 62's rule rows, not run on the GPU before), the new GPU test, then tg128 in one binary, alternated:
# BW24_NORM_FOLD=0 (off), BW24_NORM_FOLD_USE=0 (the producers write, nothing reads: their cost alone), on; Qwen3-8B
# and Qwen3.5-9B; then the GPU tests.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on wip/fold-out).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold
timeout 60 ./build-new/bw24-kernel-check gemv_q8_norm_fold > "$OUT/kc-fold-$SHA.txt" 2>&1
echo "kc fold rc=$? t=$(el)"; grep -E "\||rror|SKIP" "$OUT/kc-fold-$SHA.txt" | head -20
kc $SHA gemv_q8_gate_up_q8
timeout 100 ./build-new/tests/bw24_gpu_vs_cpu_tests "CUDA decode: folded norms against the norm launches" 2>&1 | tail -8
echo "fold test t=$(el)"
A="-p 512 -n 128 -r 2"
for i in 1 2; do
  row off new qwen3-8b:Q4_K_M tg128 "$A" BW24_NORM_FOLD=0
  row prod new qwen3-8b:Q4_K_M tg128 "$A" BW24_NORM_FOLD_USE=0
  row on new qwen3-8b:Q4_K_M tg128 "$A"
done
row off new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_NORM_FOLD=0
row on new qwen3.5-9b:Q4_K_M tg128 "$A"
echo "rows t=$(el)"
[ $(el) -lt 420 ] && gpu_tests $SHA
echo "end t=$(el)"
