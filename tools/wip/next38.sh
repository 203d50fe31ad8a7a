#!/bin/bash
# next38 (any branch with this script; carry .deps .carry):  bash tools/wip/next38.sh  (< 6 min)
# Before the call, here:  for b in main:main-src wip/fdec-v1:v1-src wip/fdec-v2:v2-src wip/fdec-q8s:v3-src; do
#   d=.carry/${b#*:}; rm -rf $d && mkdir -p $d && git archive ${b%:*} | tar -x -C $d --exclude=tests/data; done
# Flash decode variants beside main, tg128 at depth 0 / 4096 (bench only; a winner gets its kernel check when it lands):
#  v1 = main with the idle split CTAs waiting for the predecessor before they exit (the depth-0 loss of f97f213:
#       the chain after the split kernel launching early, its weight copies queueing ahead of the split's loads?)
#  v2 = main with pdl_begin first again (the position read and the prefetch after the wait)
#  v3 = main with the prefetch covering the q8_0 / q4_0 scale planes (q8_0-KV ratio 89.4 % at 44224cd, target 90 %)
# Predictions: v1 depth 0 back to main's (~393) with depth 4096 kept (~335); v3 q8_0 KV at 4096 335 -> ~342-348.
source tools/wip/lib.sh
for v in main v1 v2 v3; do cfg .carry/$v-src build-$v $v -DBW24_TESTS=OFF
  ( ninja -C build-$v -j4 bw24-bench > /tmp/b-$v.log 2>&1 || grep -A3 error /tmp/b-$v.log | head ) & done
wait; echo "built t=$(el)"
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do for v in main v1 v2; do row $v $v qwen3-8b:Q4_K_M tg128 "$P"; done; done
for v in main v3; do row $v $v qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"; done
for v in main v3; do row $v $v qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"; done
echo "end t=$(el)"
