#!/bin/bash
# next360 (round 63): next359 again with the ahead piece computed on the host and issued inside the producer warp's branch
# (next359's form computed it with a 64-bit division in every thread and read -1.3 %); the same rows and checks.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (wip/fold-ahead2); bash tools/wip/pack-bins.sh base c9549e7 bw24-bench.
# The same script as next359 (run with this build and tag).
TAG=ahead-land2 exec bash tools/wip/next359.sh "$@"
