#!/bin/bash
# next52 (main with gemv_multi; carry .carry only (packed programs and .carry/rtlib); no build on the device):  bash tools/wip/next52.sh <sha>  (< 9 min; timeout_s 560)
# Before the call, here (rm -rf .carry/bins first; ~6 min on 2 cores with ccache; each ref checked out in place, so
# the same source path keeps ccache's hits; ~47 MB carried, .carry alone):
#   bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests \
#     libbw24.so.0
#   cp tools/wip/pack-bins.sh /tmp/ && for b in base:5bd9f57 grid:wip/even-grid pf:wip/moe-prefetch; do
#     git checkout -q ${b#*:} && bash /tmp/pack-bins.sh ${b%%:*} HEAD; done; git checkout -q main
# The two variant branches, if this clone lacks them: git branch wip/X b4636a0 && git checkout wip/X &&
#   git am tools/wip/patches/X.patch && git checkout main   (X = moe-prefetch, even-grid)
# new = F16 / BF16 Q, K and V in one streamed launch (cuda::gemv_multi, round 12; not yet run on a GPU).
# 1. Its kernel check (gemv_float_multi: each segment bit-equal to its own gemv launch) and gemv_float; GPU tests.
# 2. Prediction: Qwen3-8B BF16 tg128 158.9 -> ~172 (+8 %); the Q4_K_M row does not run this code (control).
# 3. pf = wip/moe-prefetch (main + one change): the routed gate-up's CTAs, once they have read their pair's expert id,
#    ask L2 for their share of that expert's down matrix (prefetch.global.L2, ~13 KB a CTA), so the combining down GEMV
#    (whose own launch cannot prefetch: the ids come after its wait) reads L2. Qwen3-30B-A3B 383 -> ~395 (+2-4 %).
# 4. grid = wip/even-grid (main + one change): the streamed GEMV's grid sized so every CTA takes the same number of row
#    groups (512 groups: 256 CTAs of two, not 116 of two and 280 of one), the free slots holding the successor's CTAs
#    from the start. Round 11 (CTAs done early free slots for the successor's early copies) says it may gain; its
#    balanced split lost because every CTA finished together. Qwen3-8B Q4_K_M within +-3 %, sign unknown.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA gemv_float_multi gemv_float
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3-8b:BF16 tg128 "$P"; done; done; echo "t=$(el)"
for i in 1 2; do for b in new pf; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in new pf; do [ $(el) -lt 330 ] && row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for i in 1 2; do for b in base new grid; do [ $(el) -lt 400 ] && row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done
for b in new grid; do [ $(el) -lt 420 ] && row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for b in new grid; do [ $(el) -lt 440 ] && row $b $b qwen3-8b:BF16 tg128 "$P"; done; echo "t=$(el)"
[ $(el) -lt 470 ] && timeout 80 ./build-new/bw24-bench -m synthetic:qwen3-8b:BF16 -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-bf16-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "end t=$(el)"
