#!/bin/bash
# next36 (branch wip/fdec; carry .deps .carry with .carry/main-src, .carry/varA-src, .carry/varB-src):  (< 4 min)
# Which half of the flash decode change costs depth 0 ~2 % (next34 / next35): varA = the split kernel's changes with
# main's merge kernel, varB = main's split kernel with the new merge kernel; tg128 at depth 0 / 4096 of all four.
SHA=$1
source tools/wip/lib.sh
cfg .carry/varA-src build-varA varA -DBW24_TESTS=OFF; cfg .carry/varB-src build-varB varB -DBW24_TESTS=OFF
( ninja -C build-varA -j8 bw24-bench > /tmp/b4.log 2>&1 || grep -A3 error /tmp/b4.log | head ) &
( ninja -C build-varB -j8 bw24-bench > /tmp/b5.log 2>&1 || grep -A3 error /tmp/b5.log | head ) &
build_ab $SHA; wait; echo "all built t=$(el)"
P="-p 16 -n 128 -r 3 -d 0,4096"
for b in main varA varB new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done
echo "end t=$(el)"
