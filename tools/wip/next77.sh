#!/bin/bash
# next77 (carry .carry only):  bash tools/wip/next77.sh SHA  (timeout_s 400)
# new = wip/g4 SHA (8c099a0): head groups chosen by the selected instance's occupancy (one wave), with a two-head
# instance held to 64 registers (four CTAs an SM). g4 = ffff370 (the four-head instance; next76: 8B d4096 361.6 ->
# 373.5, q8_0 368.5 -> 379.3, 30B 361.4 -> 373.4, 9B 417.5 -> 424.2, d0 unchanged). At depth 4096 the rule now
# picks: 8B 2 groups (528 two-head CTAs), 30B 4 groups (528 two-head CTAs), 9B 4 groups (528 one-head CTAs).
# Prediction: twice the warps a scheduler (8) for ~60 % of the instructions a warp: split kernel 19.9 -> ~15 us,
# 8B d4096 373 -> ~385; K / V read twice from L2 (once from DRAM) may eat part of it. d0 unchanged (same choice).
# The model [gpu] tests run in the next call (libbw24 left out: 64 MiB carry).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound; check_rows $SHA attention 'head groups'
timeout 120 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU rc=$? t=$(el)"
grep -E "FAILED|All tests|test cases" "$OUT/gpu-vs-cpu-$SHA.txt" | head -5
D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in g4 new; do row $b $b qwen3-8b:Q4_K_M tg128 "$D"; row "$b kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done; done
echo "t=$(el)"
for b in g4 new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$D"; row $b $b qwen3.5-9b:Q4_K_M tg128 "$D"; done
row new new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"
echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ $(el) -lt 330 ] && timeout 60 $ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
  --section LaunchStats --section InstructionStats -k regex:"split_kernel" --launch-skip 300 --launch-count 1 \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 16 -r 1 -d 4096 --device 0 > /tmp/ncu.txt 2>&1
grep -E "^  [a-z].*split_kernel|Duration|Registers Per|Warp Cycles Per Issued|Executed Instructions  " /tmp/ncu.txt | cut -c1-140
echo "end t=$(el)"
