#!/bin/bash
# next337 (round 60): main's checks with the combine quantizing its own input (7b7c2a2): kernel check moe, the GPU
# tests, kernel check attention, the acceptance JSONs (lib.sh main_checks) and the 35B's; then the 30B and the 8B
# traced at depth 0 (where the step goes now). Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench \
#   bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (on main), and the trace libraries
#   (.carry/bins/trace--libcupti.so.13.xz, trace--libbw24-kernel-trace.so.xz).
SHA=$1
source tools/wip/lib.sh
begin $SHA-main-checks
kc $SHA moe; grep -c "quantized in the launch" "$OUT/kc-moe-$SHA.txt"
main_checks $SHA
json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
[ $(el) -lt 420 ] && trace_profile new qwen3-30b-a3b:Q4_K_M 40
[ $(el) -lt 470 ] && trace_profile new qwen3-8b:Q4_K_M 40
echo "end t=$(el)"
