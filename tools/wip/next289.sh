#!/bin/bash
# next289 (round 52): main's checks on the GPU (main b53784a's device code: round 51's late trigger and its split bound,
# whose GPU-vs-CPU tests had not run; no code has landed since): the GPU model tests, GPU vs CPU, and every kernel
# check family in one run.
# Pack (on main, clean tree): tools/wip/pack-bins.sh new HEAD bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
gpu_tests $SHA
timeout 330 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
echo "end t=$(el)"
