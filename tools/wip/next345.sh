#!/bin/bash
# next345 (round 61): main's checks on the combine's bulk copies (land/combine-bulk): kernel check moe (the form and
# its cp.async / register fallbacks, bit-equal), the GPU tests, kernel check attention, the acceptance JSONs
# (lib.sh main_checks) and the 35B's, then the 30B alternated with BW24_COMBINE_BULK=0 / 1 in the same binary.
# Pack: bash tools/wip/pack-bins.sh land HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests, then mv .carry/bins/land.tar.xz .carry/bins/new.tar.xz.
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
kc $SHA moe; check_rows $SHA moe "cp.async.bulk"; check_rows $SHA moe "moe down + combine"
main_checks $SHA
json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
for i in 1 2; do for v in 0 1; do
  row bulk=$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_BULK=$v; done; done
echo "end t=$(el)"
