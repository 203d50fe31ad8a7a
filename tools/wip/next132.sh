#!/bin/bash
# next132 (carry .carry only): bash tools/wip/next132.sh SHA  (timeout 240). Round 23's last call: where a Qwen3.5-9B
# and a Qwen3-30B-A3B Q4_K_M decode step go (ncu, kernels serialized; c7bd59c's device code = main's), and the
# Qwen3.5-27B row issue 5 asks to record (last taken in round 16).
SHA=$1
source tools/wip/lib.sh
begin next132
NCU_RANGE="--launch-skip 3000 --launch-count 700" breakdown 9b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3.5-9b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
[ $(el) -lt 100 ] && NCU_RANGE="--launch-skip 4000 --launch-count 900" breakdown 30b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
json $SHA 150 qwen3.5-27b:Q4_K_M ""
echo "end t=$(el)"
