#!/bin/bash
# next16 (main; carry .deps .carry):  bash tools/wip/next16.sh <sha>  (< 6 min)
# Where a pp512 pass goes now (wgmma dense GEMM): per-kernel GPU time of bw24-bench -p 512 -n 1 -r 1
# for qwen3-30b-a3b, qwen3.5-9b, qwen3-8b (Q4_K_M), by nsys (or ncu's gpu__time_duration without it).
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA -DBW24_TESTS=OFF
ninja -C build-new -j16 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
for m in qwen3-30b-a3b qwen3.5-9b qwen3-8b; do
  [ $(el) -lt 420 ] || break
  B="./build-new/bw24-bench -m synthetic:$m:Q4_K_M -p 512 -n 1 -r 1 --device 0"
  breakdown $m $SHA $B
done
echo "end t=$(el)"
