#!/bin/bash
# next54 (round 12's next53, never run, plus grid2; carry .carry only: new, am, grid2 programs):
#   bash tools/wip/next54.sh <sha>  (timeout_s 560)
# next52 measured main 7ef0d1a (gemv_multi) BF16 165 -> 177.7, pf -1.5 % (dropped), and grid (even row groups a CTA,
# every format) +0.8 % 8B Q4_K_M, +2.4 % 9B Q4_K_M but -4 % BF16 (its consumers read f32 activations through L1 and
# lose the third CTA's warps). grid2 = wip/even-grid2 (main + the even grid for the int8 formats only).
# Prediction: grid2 8B Q4_K_M ~+0.8 %, 9B Q4_K_M ~+2.4 %, BF16 = new, 30B within noise.
# The rest: am = wip/argmax-cluster (argmax on a cluster of 8 CTAs; kernel check argmax, rows), the 9B and 30B
# ablations (BW24_ABLATE), the 30B's kernel times (lib.sh breakdown with NCU_RANGE).
# Packing (here): bash tools/wip/pack-bins.sh grid2 wip/even-grid2; bash tools/wip/pack-bins.sh am wip/argmax-cluster
#   bw24-bench bw24-kernel-check; new per next52's header.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
timeout 60 ./build-am/bw24-kernel-check argmax > "$OUT/kc-argmax-am-$SHA.txt" 2>&1
echo "kernel-check argmax (am) rc=$? $(tail -n 1 $OUT/kc-argmax-am-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-argmax-am-$SHA.txt" | head
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in new am grid2; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for i in 1 2; do for b in new grid2; do row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
row grid2 grid2 qwen3-8b:BF16 tg128 "$P"; row grid2 grid2 qwen3-30b-a3b:Q4_K_M tg128 "$P"; echo "t=$(el)"
for p in none deltanet attn gateup down norm; do row "ablate-$p" new qwen3.5-9b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done
echo "t=$(el)"
for p in none moe attn norm; do row "ablate-$p" new qwen3-30b-a3b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done; echo "t=$(el)"
[ $(el) -lt 340 ] && NCU_RANGE="--launch-skip 3000 --launch-count 600" breakdown 30b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 12 -r 1 --device 0
echo "end t=$(el)"
