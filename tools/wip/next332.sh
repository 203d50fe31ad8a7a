#!/bin/bash
# next332 (round 59): main's checks on main with the router room (round 59's docs commit; its code is 62d105f's):
# the GPU tests, kernel check attention and gemv_q8_room, the acceptance JSONs (lib.sh main_checks).
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
kc $SHA gemv_q8_room; grep -h "gemv_q8_room" "$OUT/kc-gemv_q8_room-$SHA.txt"
main_checks $SHA
echo "end t=$(el)"
