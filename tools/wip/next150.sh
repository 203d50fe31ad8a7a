#!/bin/bash
# next150 (carry .carry only): bash tools/wip/next150.sh SHA  (timeout 400) -- round 27: why a Qwen3-8B Q4_K down
# projection (K = 12288, 28.3 MB) takes as long as a Q6_K one (41.3 MB): ncu of the streamed GEMV's add launches
# (O and down, Q4_K) and of the Q6_K downs, one token, kernels serialized. new = main's bench (packed as new).
SHA=$1
source tools/wip/lib.sh
begin $SHA
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1); echo "ncu=$ncu"
S="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis"
run_ncu() { local tag=$1 re=$2 n=$3
  timeout 150 $ncu --clock-control none --kernel-name-base demangled -k "regex:$re" --launch-count $n $S \
    ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 4 -r 1 --device 0 > $OUT/ncu-$tag.txt 2>&1
  echo "$tag rc=$? t=$(el)"
  grep -E "^  [a-z_]+.*gemv_stream|Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Issued Ipc Active|No Eligible|Active Warps Per Scheduler|Eligible Warps|Warp Cycles Per Issued|Executed Ipc E|Grid Size|Registers Per|Dynamic Shared|Achieved Occupancy|Stall|stalled|L2 Hit" $OUT/ncu-$tag.txt | head -150
}
run_ncu q4k-add 'KQuantStream<.bool.0>, .bw24::cuda::GemvOut.1' 12
run_ncu q6k-add 'Q6KStream<.int.16>, .bw24::cuda::GemvOut.1' 3
echo "end t=$(el)"
