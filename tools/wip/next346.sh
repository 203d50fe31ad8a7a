#!/bin/bash
# next346 (round 61): the one-token Q4_K routed gate-up by cp.async.bulk (wip/gateup-bulk): kernel check moe (the
# routed gate-up rows bit-equal to the plain kernel's, "rows by cp.async.bulk" where taken), the 30B alternated with
# BW24_GATEUP_BULK=0 / 1, the GPU tests, the 35B. Pack: bash tools/wip/pack-bins.sh gub HEAD bw24-bench \
#   bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (on the branch).
SHA=$1
source tools/wip/lib.sh
begin $SHA-gateup-bulk
KC_BUILD=gub kc $SHA moe; check_rows $SHA moe "rows by cp.async.bulk"
for i in 1 2; do for v in 0 1; do
  row gub=$v gub qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_GATEUP_BULK=$v; done; done
mkdir -p build-new && cp -r build-gub/* build-new/ && gpu_tests $SHA
for v in 0 1; do row gub=$v gub qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_GATEUP_BULK=$v; done
echo "end t=$(el)"
