#!/bin/bash
# next364 (round 63's review): the fold targets decided at init (host code only): the fold test, the GPU vs CPU suite,
# and Qwen3-8B / Qwen3.5-9B tg128 with the fold on and off.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_gpu_vs_cpu_tests (main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-review
timeout 150 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > /tmp/g.txt 2>&1; echo "GPU vs CPU rc=$?"
grep -E "against the CPU|All tests|test cases|FAILED" /tmp/g.txt | head -6
A="-p 512 -n 128 -r 2"
row off new qwen3-8b:Q4_K_M tg128 "$A" BW24_NORM_FOLD=0
row on new qwen3-8b:Q4_K_M tg128 "$A"
row on new qwen3.5-9b:Q4_K_M tg128 "$A"
echo "end t=$(el)"
