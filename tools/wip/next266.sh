#!/bin/bash
# next266 (round 47): bw24-microbench l2_prefetch (benchmarks/bulk_probe.cu; measured from branch wip/prefetch-probe ae0cee1, on main since f0efb72): how long a
# launch of N CTAs lasts when each requests bytes / N into L2 with cp.async.bulk.prefetch.L2 and exits. Carry .carry
# with new--bw24-microbench. Prediction from next265 (~260 GB/s an SM): 1 CTA x 14 MB ~55 us over the empty launch,
# 8 CTAs ~7 us, 24 x 10 MB ~1.6 us, 132 CTAs at DRAM's rate (14 MB ~3.5 us, 64 MB ~15 us).
SHA=$1
source tools/wip/lib.sh
begin $SHA-l2-prefetch
./build-new/bw24-microbench --benchmark_filter=l2_prefetch --benchmark_min_time=0.2 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | tee $OUT/micro-l2-prefetch-$SHA.txt | grep -E "copy|median"
echo "end t=$(el)"
