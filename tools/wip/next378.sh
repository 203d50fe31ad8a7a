#!/bin/bash
# next378 (round 65, for a later device call, after next377 on the same build): how much of the decode step's small
# launches waits on instruction fetch. ncu (kernels serialized) over two layers' streamed GEMV and flash decode launches
# of a Qwen3-8B Q4_K_M decode step, main's instances (BW24_LEAN=0) and the lean ones (BW24_LEAN=2 BW24_LEAN_FLASH=1),
# caches flushed between passes (all) and kept (none): the duration and the stall reasons per issued instruction,
# no-instruction and IMC miss among them.
# Since round 66 the packed build is wip/defer 73c2642 (wip/lean2 with one more switch, BW24_DEFER, unset here): the
# instances this script runs are SASS-identical to wip/lean2 3d1dd25's.
SHA=$1
source tools/wip/lib.sh
begin $SHA-ifetch
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,smsp__average_warp_latency_per_inst_issued.ratio
for r in no_instruction imc_miss barrier long_scoreboard wait branch_resolving; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
for cache in all none; do for lean in 0 1; do
  BW24_LEAN=$((2 * lean)) BW24_LEAN_FLASH=$lean timeout 150 $ncu --clock-control none --cache-control $cache -k "regex:gemv_stream_kernel|split_kernel" \
    --launch-skip 400 --launch-count 12 --metrics $M --csv ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M \
    -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-$cache-lean$lean.csv 2> /tmp/ncu-$cache-$lean.err
  echo "ncu cache=$cache lean=$lean rc=$? t=$(el)"; tail -2 /tmp/ncu-$cache-$lean.err
  python3 - $OUT/ncu-$cache-lean$lean.csv <<'PY'
import csv, sys, collections, re
rows = collections.OrderedDict()
for x in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')):
    k = (x['ID'], re.sub(r'\(anonymous namespace\)::|bw24::cuda::|gemv_detail::', '', x['Kernel Name'])[:90])
    rows.setdefault(k, {})[x['Metric Name'].replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', '')] = x['Metric Value']
for (i, n), m in rows.items():
    print(i, n, ' '.join(f"{k.split('.')[0][:22]}={v}" for k, v in m.items()))
PY
done; done
echo "end t=$(el)"
