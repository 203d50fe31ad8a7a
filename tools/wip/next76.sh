#!/bin/bash
# next76 (carry .carry only):  bash tools/wip/next76.sh SHA  (timeout_s 560)
# new = wip/g4 SHA: the split kernel's four-head instance (97 registers against 111 for f16; its loops without the
# kMaxGroup predicated heads), the query rows' halves a pad apart (2.4-way shared-load conflicts), sum_warps in
# vectors (2.5-way store conflicts). next75: at depth 4096 the split kernel ran 2,550 instructions a warp at 14.5 cycles
# each (0.41 eligible warps a scheduler): 22.4 us a Qwen3-8B layer alone for 16.9 MB.
# Prediction: split kernel 22 -> ~16 us alone; in the graph 8B d4096 f16 361 -> ~375, q8_0 367 -> ~380; d0 unchanged
# (one-head instance); 30B d4096 (G = 8 in two groups of 4) 358 -> ~370.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "$D"; row "$b kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done; done
echo "t=$(el)"
for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$D"; done
echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for kv in f16 q8_0; do [ $(el) -lt 430 ] && timeout 60 $ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
  --section LaunchStats --section InstructionStats -k regex:"split_kernel" --launch-skip 300 --launch-count 1 \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 16 -r 1 -d 4096 --kv $kv --device 0 > /tmp/ncu-$kv.txt 2>&1
  grep -E "^  [a-z].*split_kernel|Duration|Registers Per|Warp Cycles Per Issued|Executed Instructions  " /tmp/ncu-$kv.txt | cut -c1-120; done
for b in main new; do [ $(el) -lt 470 ] && row $b $b qwen3.5-9b:Q4_K_M tg128 "$D"; done
echo "end t=$(el)"
