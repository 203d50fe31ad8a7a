#!/bin/bash
# next39 (branch wip/rope-only; carry .deps .carry):  bash tools/wip/next39.sh <sha>  (< 8 min)
# Before the call, here:  for b in main:main-src wip/r-v1:v1-src wip/r-v2:v2-src wip/r-v3:v3-src; do
#   d=.carry/${b#*:}; rm -rf $d && mkdir -p $d && git archive ${b%:*} | tar -x -C $d --exclude=tests/data; done
# new = main + flash decode doing qk_rope_store's work (fused_rope; measured at +3 % inside wip/rope-fuse, where
# wip/prodq's producer copies gained nothing); v1 / v2 / v3 = new + next38's flash decode variants:
#  v1 idle split CTAs wait before they exit, v2 pdl_begin first, v3 prefetch of the q8_0 / q4_0 scale planes.
# Predictions: new 8B tg128 ~399 / ~350 (d0 / d4096); v1 / v2 depth 0 +~1 %; v3 q8_0 KV at 4096 +~2 %.
SHA=$1
source tools/wip/lib.sh
for v in v1 v2 v3; do cfg .carry/$v-src build-$v $v -DBW24_TESTS=OFF
  ( ninja -C build-$v -j5 bw24-bench > /tmp/b-$v.log 2>&1 || grep -A3 error /tmp/b-$v.log | head ) & done
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
wait; echo "all built t=$(el)"
kc $SHA attention qk_rope
gpu_tests $SHA; grep -E "fused RoPE|FAILED" "$OUT/gpu-tests-$SHA.txt" | head -5
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do for b in main new v1 v2 v3; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done
for i in 1 2; do for b in main new v3; do row "$b q8kv" $b qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"; done; done
echo "rows t=$(el)"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
