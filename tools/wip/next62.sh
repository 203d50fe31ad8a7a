#!/bin/bash
# next62 (carry .carry only):  bash tools/wip/next62.sh <sha>  (< 7 min; timeout_s 480)
# new = wip/grid-bound (main 529bc7d + flash decode's split grid stopping at a known position bound's split: 8 x 8 CTAs
# a layer below position 1,024 where n_ctx 4,616 gave 8 x 37); base = main 529bc7d.
# 1. Kernel check attention (every family: host positions now size the grid too; attention_bound), GPU tests.
# 2. Prediction: the JSON form's depth-0 tg128 up to the short-context rows: Qwen3-8B Q4_K_M ~416 -> ~421, the 30B
#    ~382 -> ~384; depth 4096 unchanged (no bound there).
# 3. ncu of the 30B's MoE launches (router gate_kernel, routed gate-up gemv_q8_kernel, routed down + combine): warp
#    stall reasons, occupancy, memory throughput, for where the routed gate-up's 12 us go (1.2 TB/s).
# Packing (here): on wip/grid-bound pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests libbw24.so.0; on main pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA attention
gpu_tests $SHA
J="-p 512 -n 128 -r 2 -d 0,4096"
for i in 1 2; do for b in base new; do row "$b(json form)" $b qwen3-8b:Q4_K_M tg128 "$J"; done; done; echo "t=$(el)"
for b in base new; do row "$b(json form)" $b qwen3-30b-a3b:Q4_K_M tg128 "$J"; done; echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 150 $ncu --clock-control none -k regex:"gate_kernel|gemv_q8_kernel|gemv_q8_combine" --launch-skip 600 \
  --launch-count 6 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 64 -r 1 -d 0 --device 0 > "$OUT/ncu-moe-$SHA.txt" 2>&1
echo "ncu rc=$? t=$(el)"; grep -E "gate_kernel|gemv_q8|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Stall" \
  "$OUT/ncu-moe-$SHA.txt" | head -60
echo "end t=$(el)"
