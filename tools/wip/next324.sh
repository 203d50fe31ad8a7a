#!/bin/bash
# next324 (round 58): main 6eba644 (the narrow merge at D = 128, the split order reversed where a merge follows):
# GPU model tests, GPU vs CPU, kernel check attention, the acceptance JSONs (-p 512 -n 128 -d 0,4096 -r 2).
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
main_checks $SHA
echo "end t=$(el)"
