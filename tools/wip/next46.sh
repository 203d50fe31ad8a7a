#!/bin/bash
# next46 (branch wip/gate-norm; carry .deps .carry):  bash tools/wip/next46.sh <sha>  (< 8 min)
# Before the call, here: .carry/main-src = git archive main (cd475a1: round 11's combine), stories260K files in .carry.
# new = moe_gate also does the MoE block's rmsnorm_q8 for one-token steps (MoeGateNorm, fused_gate): every router CTA
# normalizes the residual row in shared memory, CTAs b < cols / 256 write the normed slice and its int8 blocks.
# Prediction: one launch and boundary fewer a MoE layer less a CTA reduction in the router's critical path:
# Qwen3-30B-A3B 383 -> ~392 (+2-3 %), Qwen3.6-35B-A3B 375 -> ~385. Risk: round 2's consumer-side fold lost.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA moe
grep -E "moe_gate \+ norm" "$OUT/kc-moe-$SHA.txt" | head -14
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"; done
for i in 1 2; do for b in main new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; done; done; echo "t=$(el)"
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do [ $(el) -lt 430 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z')
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
