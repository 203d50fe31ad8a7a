#!/bin/bash
# next155 (carry .carry only): bash tools/wip/next155.sh SHA  (timeout 300) -- round 27: the landed tip's streamed GEMV
# kernel check and GPU tests (the long-row dispatch moved into launch_kquant after next153 measured it).
# Pack: tools/wip/pack-bins.sh new HEAD bw24-kernel-check tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gemv_q8_streamed
gpu_tests $SHA
echo "end t=$(el)"
