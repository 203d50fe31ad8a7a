#!/bin/bash
# next68 (carry .carry only):  bash tools/wip/next68.sh f940b3a  (timeout_s 580)
# new = wip/head-split: flash decode spreads a KV head's query heads over head groups of CTAs (grid within two
# CTAs an SM); base = main's device code (4c243d7 = dd5e1f0's kernels).
# Why (next67): flash decode at a short history costs 10.3 us a Qwen3-30B-A3B layer in the graph (414.1 -> 520.5
# tok/s with it ablated) and 7.7 us a Qwen3-8B layer (422.1 -> 477.8); alone 15.1 / 12.2 us (ncu), for ~0.3 MB of
# cache: 4 (8) working CTAs, each serial over 8 (4) heads.
# 1. Kernel check attention (every grouping bit-equal to the call's choice), attention_rope (fused, groups 1 and G:
#    output and caches), attention_bound; GPU tests.
# 2. Prediction: 30B 414 -> ~455 (flash decode ~10 -> ~5 us a layer), 8B 422 -> ~435, 9B ~ +2 %, 35B-A3B ~ +5 %.
# 3. JSON rows of new (acceptance form), ncu of new's split kernel.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
P="-p 16 -n 128 -r 3 -d 0"
ab "$P" qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M
echo "t=$(el)"
for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done
echo "t=$(el)"
for m in qwen3-8b qwen3-30b-a3b; do [ $(el) -lt 420 ] && timeout 100 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M -p 512 -n 128 \
  -d 0,4096 -r 2 --device 0 --json "$OUT/$SHA-$m-Q4_K_M-h200.json" 2>&1 | grep -E "tg128|pp512"; echo "t=$(el)"; done
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ $(el) -lt 500 ] && timeout 60 $ncu --clock-control none -k regex:"split_kernel" --launch-skip 300 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 16 -r 1 -d 0 --device 0 > "$OUT/ncu-$SHA.txt" 2>&1
grep -E "split_kernel|Duration|Registers Per|Achieved Occ|Warp Cycles Per Issued|Grid Size" "$OUT/ncu-$SHA.txt" | head -12
echo "end t=$(el)"
