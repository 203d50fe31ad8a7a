#!/bin/bash
# next386 (round 70, after next385 refuted the flash bound): why the Q4_K gate-up moves 56.6 MB in ~15.9 us (3.6 TB/s)
# where the LM head streams at ~4.4 and the Q4_K down at ~4.3. (1) bw24-microbench bulk_stream: the gate-up's stage
# pattern (1,152-byte pieces of 2,304-byte rows, three CTAs an SM, three stages) against the same bytes contiguous, no
# arithmetic; (2) ncu over one decode step's streamed GEMV launches (kernels serialized): DRAM throughput, issue
# activity and stall reasons; (3) the step with each stage's row pieces copied from one contiguous span instead
# (BW24_DIAG_CONTIG=1: the gate-ups, =2: every Q4_K launch; tokens garbage, the timing of a tiled layout).
# Pack: on a branch with tools/wip/patches/diag-contig.patch applied (git apply), committed,
# tools/wip/pack-bins.sh new HEAD bw24-bench bw24-microbench; run as bash tools/wip/next386.sh SHA.
SHA=$1
source tools/wip/lib.sh
begin $SHA-gateup
timeout 150 ./build-new/bw24-microbench --benchmark_filter=bulk_stream 2>&1 | grep -E "bulk_stream|rror" | tee $OUT/micro-bulk-$SHA.txt
echo "micro t=$(el)"
for i in 1 2; do
  row main new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row contig-gateup new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_DIAG_CONTIG=1
  row contig-all new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_DIAG_CONTIG=2
done
row main-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row contig-gateup-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_DIAG_CONTIG=1
echo "rows t=$(el)"
ncu_stalls $OUT/ncu-gemv-$SHA.csv 200 -k "regex:gemv_stream_kernel" --launch-skip 300 --launch-count 14 \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 8 -r 1 --device 0
echo "end t=$(el)"
