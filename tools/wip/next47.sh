#!/bin/bash
# next47 (warm after next46, build-main = main cd475a1; carry .deps .carry):  bash tools/wip/next47.sh  (< 6 min)
# Per-kernel GPU time of a decode run (nsys, else ncu) on main: Qwen3-30B-A3B and Qwen3-8B Q4_K_M, for the next
# round's plan (what a step's launches cost after round 11's combine).
source tools/wip/lib.sh
[ -x build-main/bw24-bench ] || { cfg .carry/main-src build-main main -DBW24_TESTS=OFF; ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1; }
echo "ready t=$(el)"
breakdown 30b main ./build-main/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 32 -r 1 -d 0 --device 0
breakdown 8b main ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 -d 0 --device 0
echo "end t=$(el)"
