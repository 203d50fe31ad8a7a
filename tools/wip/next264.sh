#!/bin/bash
# next264 (prepared in round 46, not run): the routed MoE launches of Qwen3-30B-A3B alone, experts hot in L2 against
# cold (bw24-microbench moe_routed, benchmarks/micro.cpp). Carry .carry with new--bw24-microbench (pack-bins.sh new HEAD
# bw24-microbench). Prediction from round 46's right/wrong rows: hot within ~0.2-0.4 us of cold; a few microseconds
# would instead point at the side stream's interference as what hid the hits.
SHA=$1
source tools/wip/lib.sh
begin $SHA-routed
./build-new/bw24-microbench --benchmark_filter=moe_routed --benchmark_min_time=0.3 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | tee $OUT/micro-moe-routed-$SHA.txt | grep -E "copy|moe_routed"
echo "end t=$(el)"
