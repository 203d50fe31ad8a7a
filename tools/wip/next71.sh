#!/bin/bash
# next71 (carry .carry only):  bash tools/wip/next71.sh SHA  (timeout_s 560)
# main = main SHA (round 15's device code: head groups + the one-head split kernel, 83e1e05's kernels) with the
# BW24_FLASH_HEAD_GROUPS timing hook. Packed (here, on main a2de8ec): tools/wip/pack-bins.sh main HEAD bw24-bench
# Why: round 15 left both depth ratios under their bars (8B f16 362.6 / 437.8 = 82.8 %, q8_0 KV 367.1 / 423.0 =
# 86.8 %): depth 4096 is round 14's code (8 x 37 CTAs of 4 heads, the generic instance, the merge kernel), ~13 us a
# layer more than depth 0; the bars need ~2.0 / ~2.7 us a layer of it back.
# 1. The acceptance JSON rows round 15 could not re-run with the one-head instance (9B, 35B-A3B, 27B, Q8_0, BF16,
#    9B Q8_0), so the table has one commit.
# 2. Depth 4096 with the query heads over 1 (the call's choice there), 2 and 4 CTAs a split (same bits; with 4 the
#    one-head instance, 4 x the CTAs and 4 x the L2 reads of K / V), f16 and q8_0 caches. Prediction: unknown sign;
#    4 wins if the 4-head CTAs' serial phases, not the cache bytes (16.8 MB f16 a layer, ~4 us at 4.2 TB/s), bound it.
# 3. ncu at depth 4096: the split and merge kernels (duration, stalls), to split the ~13 us.
SHA=$1
source tools/wip/lib.sh
begin $SHA
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for mq in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M qwen3-8b:Q8_0 qwen3-8b:BF16 qwen3.5-9b:Q8_0 qwen3.5-27b:Q4_K_M; do
  [ $(el) -lt 240 ] && timeout 60 ./build-main/bw24-bench -m synthetic:$mq $J --json "$OUT/$SHA-${mq/:/-}-h200.json" | grep -E "tg128|pp512"
  echo "t=$(el)"; done
D="-p 16 -n 128 -r 3 -d 4096"
for kv in f16 q8_0; do for g in 1 2 4; do [ $(el) -lt 420 ] && row "groups=$g kv=$kv" main qwen3-8b:Q4_K_M tg128 "$D --kv $kv" BW24_FLASH_HEAD_GROUPS=$g; done; done
echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ $(el) -lt 470 ] && timeout 70 $ncu --clock-control none -k regex:"split_kernel|merge_kernel" --launch-skip 400 --launch-count 2 \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 16 -r 1 -d 4096 --device 0 > "$OUT/ncu-depth-$SHA.txt" 2>&1
grep -E "split_kernel|merge_kernel|Duration|Registers Per|Warp Cycles Per Issued|Achieved Occ|DRAM Through" "$OUT/ncu-depth-$SHA.txt" | head -16
echo "end t=$(el)"
