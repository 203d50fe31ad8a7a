#!/bin/bash
# next52 (main with gemv_multi; carry .deps .carry; no build on the device):  bash tools/wip/next52.sh <sha>  (< 9 min; timeout_s 560)
# Before the call, here (rm -rf .carry/bins first; ~6 min on 2 cores with ccache):
#   bash tools/wip/pack-bins.sh base 5bd9f57
#   bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
# new = F16 / BF16 Q, K and V in one streamed launch (cuda::gemv_multi, round 12; not yet run on a GPU).
# 1. Its kernel check (gemv_float_multi: each segment bit-equal to its own gemv launch) and gemv_float; GPU tests.
# 2. Prediction: Qwen3-8B BF16 tg128 158.9 -> ~172 (+8 %); the Q4_K_M row does not run this code (control).
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA gemv_float_multi gemv_float
gpu_tests $SHA; cat "$OUT/gpu-vs-cpu-$SHA.txt" >> "$OUT/gpu-tests-$SHA.txt" && rm "$OUT/gpu-vs-cpu-$SHA.txt"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3-8b:BF16 tg128 "$P"; done; done; echo "t=$(el)"
for i in 1 2; do for b in new pf; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in new pf; do [ $(el) -lt 330 ] && row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for i in 1 2; do for b in base new grid; do [ $(el) -lt 400 ] && row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done
for b in new grid; do [ $(el) -lt 420 ] && row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
[ $(el) -lt 450 ] && timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:BF16 -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-bf16-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "end t=$(el)"
