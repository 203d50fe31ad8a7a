#!/bin/bash
# next293 (round 53): the rest of main's checks with merge-once landed (5c1fddc; next292 ran the attention families,
# the model tests and the JSONs): GPU vs CPU and every kernel check family in one run.
# Pack (on main at 5c1fddc's device code, clean tree): tools/wip/pack-bins.sh new HEAD bw24-kernel-check
#   tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
gpu_tests $SHA
timeout 330 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
echo "end t=$(el)"
