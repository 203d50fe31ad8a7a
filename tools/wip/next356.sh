#!/bin/bash
# next356 (round 63): the folded norms' landing build (wip/fold-out without its timing knobs): kernel check
# gemv_q8_norm_fold, gemv_q8_streamed and gemv_q8_chain (the plain instances beside the new ones), main's checks (GPU
# tests with the fold test, kernel check attention, the acceptance JSONs) and the 35B's JSON.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on wip/fold-out).
SHA=$1
source tools/wip/lib.sh
begin $SHA-land
kc $SHA gemv_q8_norm_fold gemv_q8_streamed gemv_q8_chain
grep "|" "$OUT/kc-gemv_q8_norm_fold-$SHA.txt" | cut -c1-160
main_checks $SHA
grep -E "folded norms|mid-qwen3" "$OUT/gpu-tests-$SHA.txt"
json $SHA 450 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
