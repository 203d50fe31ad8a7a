#!/bin/bash
# next362 (round 63): the fold test on mid-qwen35 (Qwen3.5-9B's widths, four layers: the FFN norms after the delta nets'
# out_proj and the gated attention's O fold) beside mid-qwen3.
# Pack: bash tools/wip/pack-bins.sh new HEAD tests/bw24_gpu_vs_cpu_tests (wip/fold-test35).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold-test35
timeout 200 ./build-new/tests/bw24_gpu_vs_cpu_tests "CUDA decode: folded norms against the norm launches" 2>&1 | tail -14
echo "end t=$(el)"
