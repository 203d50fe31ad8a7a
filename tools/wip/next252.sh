#!/bin/bash
# next252 (round 44: docs/performance.md): what StepNext's stores cost the argmax kernel (round 44's trace: its kernel
# 6.1-6.7 us against round 35's 4.0-4.4). Calls:
#   bash tools/wip/next252.sh SHA micro -- carry .carry with the tree's bw24-microbench as new--: bw24-microbench
#     argmax/0 (no StepNext), /1 (position, hold flag, 16 stop tokens), /2 (and the pinned host store), /3 (the pinned
#     store alone), three times
# Prediction: the device stores cost nothing measurable; the pinned store (a PCIe write before the kernel completes)
# ~1-2 us.
SHA=$1  # the bins' commit (the device tree's git HEAD may be stale: pass it from here)
source tools/wip/lib.sh
begin $SHA-$2
if [ "$2" = micro ]; then
  for i in 1 2 3; do
    timeout 60 ./build-new/bw24-microbench --benchmark_filter='^argmax' --benchmark_min_time=0.3 2>&1 | grep -E "^argmax"
  done
fi
echo "end t=$(el)"
