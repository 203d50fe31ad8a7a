#!/bin/bash
# next350 (round 62): main's checks and acceptance JSONs on the landed gate-up int8 output (cf7c235 + docs): kernel
# check gemv_q8_gate_up_q8, the GPU tests, kernel check attention, the JSONs (lib.sh main_checks) and the 35B's.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
kc $SHA gemv_q8_gate_up_q8
main_checks $SHA
json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
