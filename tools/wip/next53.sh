#!/bin/bash
# next53 (after next52, same .carry/bins; carry .carry only):  bash tools/wip/next53.sh <sha>  (< 9 min; timeout_s 560)
# Where a hybrid and a MoE step go inside the graph now (BW24_ABLATE, round 4's tables redone on the tip): Qwen3.5-9B
# Q4_K_M (delta-net mixers, attention, gate-up, down, the norms) and Qwen3-30B-A3B Q4_K_M (MoE blocks, attention,
# norms). Round 4 had the 30B's MoE blocks at 34 us a layer for 21-25 MB and the 9B's delta nets at 35 us a layer;
# nothing has been measured part by part on either since rounds 6-11 changed both. Then the 30B's per-kernel times
# (ncu, serialized) for one decode step, where round 11's 150 s profile did not finish: -n 4 and a launch range.
# Also am = wip/argmax-cluster (main + one change; tools/wip/patches/argmax-cluster.patch): greedy argmax on a cluster
# of 8 CTAs reading each other's bests through distributed shared memory (one CTA took 11.3 us for 151,936 logits,
# outside the graph, every step). Kernel check argmax (ties across CTAs, unaligned, NaN first) and rows beside new.
# Prediction: ~8 us a step less: Qwen3-8B Q4_K_M +0.3 % (within noise; the check and the kernel time matter more).
# Before the call (if .carry/bins lacks am's programs): bash tools/wip/pack-bins.sh am wip/argmax-cluster bw24-bench \
#   bw24-kernel-check   (after a checkout of the branch, as next52's header does for its variants; if this clone
#   lacks the branch: git checkout -b wip/argmax-cluster main && git am tools/wip/patches/argmax-cluster.patch)
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
timeout 60 ./build-am/bw24-kernel-check argmax > "$OUT/kc-argmax-am-$SHA.txt" 2>&1
echo "kernel-check argmax (am) rc=$? $(tail -n 1 $OUT/kc-argmax-am-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-argmax-am-$SHA.txt" | head
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in new am; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for p in none deltanet attn gateup down norm; do row "ablate-$p" new qwen3.5-9b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done
echo "t=$(el)"
for p in none moe attn norm; do row "ablate-$p" new qwen3-30b-a3b:Q4_K_M tg128 "$P" BW24_ABLATE=$p; done; echo "t=$(el)"
[ $(el) -lt 300 ] && NCU_RANGE="--launch-skip 3000 --launch-count 600" breakdown 30b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 12 -r 1 --device 0
echo "end t=$(el)"
