#!/bin/bash
# next354 (round 63): the fold test against the CPU reference (wip/fold-out), and the Qwen3-8B step traced with the
# folded norms and without (BW24_NORM_FOLD=0): where the rmsnorm_q8 launches' 142 us went.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on wip/fold-out).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold-trace
timeout 150 ./build-new/tests/bw24_gpu_vs_cpu_tests "CUDA decode: folded norms against the norm launches" 2>&1 | tail -8
echo "fold test t=$(el)"
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-fold qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-nofold qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_NORM_FOLD=0
sed -n '/| pos |/,$p' $OUT/profile-8b-fold.md | sed -n 3,22p
echo "end t=$(el)"
