#!/bin/bash
# next13 (run from wip/combo or main; carry .deps .carry):  bash tools/wip/next13.sh <sha>  (~6 min)
# Evidence for the next round: ncu detail sections (stall reasons, memory, source counters) of the
# streamed gate-up of a Qwen3-8B Q4_K_M token (with and without BW24_L2_OWN), the routed GEMVs of a
# Qwen3-30B-A3B token, flash decode at depth 4096 and a Qwen3.5-9B token's delta-net conv / step.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA -DBW24_TESTS=OFF
ninja -C build-new -j16 bw24-bench > /tmp/b.log 2>&1 || { grep -A3 error /tmp/b.log | head; exit 1; }
echo "built t=$(el)"
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section SourceCounters"
nc() { local name=$1 regex=$2 skip=$3 count=$4 model=$5 extra=$6; shift 6
  env "$@" timeout 150 ncu --clock-control none -k regex:"$regex" --launch-skip $skip --launch-count $count $S \
    ./build-new/bw24-bench -m synthetic:$model -p 16 -n 4 -r 1 $extra --device 0 > $OUT/ncu-$name-$SHA.txt 2>&1
  echo "ncu $name rc=$? t=$(el)"
  grep -E "^  [a-z_ ]*(kernel|Kernel)|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible|Stall" $OUT/ncu-$name-$SHA.txt | cut -c1-150 | head -40; }
# Qwen3-8B: launches per token ~ 10 a layer; skip the prefill pass and a token's worth, then the gate-up ones.
nc gateup gemv_stream_kernel 300 6 qwen3-8b:Q4_K_M ""
nc gateup-own gemv_stream_kernel 300 6 qwen3-8b:Q4_K_M "" BW24_L2_OWN=1
nc routed gemv_q8_kernel 100 4 qwen3-30b-a3b:Q4_K_M ""
nc flash4096 "split_kernel|merge_kernel" 80 4 qwen3-8b:Q4_K_M "-d 4096"
[ $(el) -lt 420 ] && nc deltanet "conv_kernel|step_kernel" 60 4 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
