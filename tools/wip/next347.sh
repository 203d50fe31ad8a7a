#!/bin/bash
# next347 (round 62, prepared in round 61, not run): main's checks and acceptance JSONs with both bulk forms (the
# combine's, 3a101b7, and the routed gate-up's past one wave, 4ef6652): kernel check moe, the GPU tests, kernel check
# attention, the JSONs (lib.sh main_checks) and the 35B's; then the 30B alternated with BW24_GATEUP_BULK=0 / 1 in the
# landed form (the 35B takes the register kernel either way). Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench \
#   bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (on main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
kc $SHA moe; check_rows $SHA moe "cp.async.bulk"
main_checks $SHA
json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
for i in 1 2; do for v in 0 1; do
  row gub=$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_GATEUP_BULK=$v; done; done
row gub=1 new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
echo "end t=$(el)"
