#!/bin/bash
# next44 (branch wip/combine; carry .deps .carry):  bash tools/wip/next44.sh <sha>  (< 9.5 min)
# Before the call, here: .carry/main-src = git archive main (6d6b95d), .carry/d128-src = git archive wip/rope-d128
# (wip/combine + fused_rope only at D <= 128), stories260K files in .carry.
# new = the routed down GEMV combines into the residual (gemv_q8_combine): moe_combine's launch and boundary go.
# Prediction: Qwen3-30B-A3B tg128 371 -> ~385 (2 us x 48 layers of 2.69 ms), Qwen3.6-35B-A3B ~371 -> ~380.
SHA=$1
source tools/wip/lib.sh
cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $SHA; cfg .carry/d128-src build-d128 d128 -DBW24_TESTS=OFF
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-d128 -j16 bw24-bench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(el)"
kc $SHA moe
gpu_tests $SHA
grep -E "moe down|FAIL" "$OUT/kc-moe-$SHA.txt" | head -24
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"; done
for b in main new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; done; echo "t=$(el)"
for i in 1 2; do for b in new d128; do [ $(el) -lt 540 ] && row $b $b qwen3.5-9b:Q8_0 tg128 "-p 16 -n 128 -r 3 -d 0"; done; done
echo "end t=$(el)"
