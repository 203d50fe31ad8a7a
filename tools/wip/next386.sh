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
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu=$ncu"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
for r in long_scoreboard barrier wait short_scoreboard mio_throttle no_instruction math_pipe_throttle lg_throttle membar sleeping; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
[ -n "$ncu" ] && timeout 200 $ncu --clock-control none -k "regex:gemv_stream_kernel" --launch-skip 300 --launch-count 14 \
  --metrics $M --csv ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 8 -r 1 --device 0 \
  > $OUT/ncu-gemv-$SHA.csv 2> /tmp/ncu.err
echo "ncu rc=$? t=$(el)"; tail -3 /tmp/ncu.err
python3 - $OUT/ncu-gemv-$SHA.csv <<'PY'
import csv, sys, collections, re
rows = collections.OrderedDict()
for x in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')):
    k = (x['ID'], re.sub(r'\(anonymous namespace\)::|bw24::cuda::|gemv_detail::|gemv_stream_kernel', '', x['Kernel Name'])[:60])
    n = x['Metric Name'].replace('smsp__average_warps_issue_stalled_', 'st_').replace('_per_issue_active.ratio', '')
    rows.setdefault(k, {})[n.split('.')[0][:24]] = x['Metric Value']
for (i, n), m in rows.items():
    print(i, n, ' '.join(f"{k}={v}" for k, v in m.items()))
PY
echo "end t=$(el)"
