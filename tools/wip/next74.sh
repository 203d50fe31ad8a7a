#!/bin/bash
# next74 (carry .carry only):  bash tools/wip/next74.sh SHA  (timeout_s 560)
# main = main's device code (a2de8ec's bench; 67c3cab: same kernels). kv-ahead dropped (next72 / next73), and the
# head groups at depth measured (next73: 2 / 4 CTAs slower), so:
# 1. The acceptance JSON rows round 15 could not re-run with the one-head instance (9B, 35B-A3B, Q8_0, BF16, 9B Q8_0,
#    27B), so the table reads one device code.
# 2. Per kernel at depth 4096 and depth 0 (ncu, kernels serialized, one decode layer's launches x 5): where the ~13 us
#    a layer of depth goes (split / merge kernels, and the GEMVs after the cache reads).
SHA=$1
source tools/wip/lib.sh
begin $SHA
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for mq in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M qwen3-8b:Q8_0 qwen3-8b:BF16 qwen3.5-9b:Q8_0 qwen3.5-27b:Q4_K_M; do
  [ $(el) -lt 300 ] && timeout 70 ./build-main/bw24-bench -m synthetic:$mq $J --json "$OUT/$SHA-${mq/:/-}-h200.json" | grep -E "tg128|pp512"
  echo "t=$(el)"; done
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for d in 4096 0; do [ $(el) -lt 470 ] && timeout 60 $ncu --clock-control none -k regex:"gemv|split_kernel|merge_kernel|rmsnorm_q8" \
  --launch-skip 600 --launch-count 45 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct --csv \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 -d $d --device 0 > "$OUT/ncu-layer-d$d-$SHA.csv" 2>&1
  python3 - "$OUT/ncu-layer-d$d-$SHA.csv" <<'PY'
import csv, sys, collections
rows = collections.OrderedDict()
for x in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')):
    k = (x['ID'], x['Kernel Name'].split('(')[0][:70]); rows.setdefault(k, {})[x['Metric Name']] = (x['Metric Value'], x['Metric Unit'])
for (i, n), m in list(rows.items())[:24]: print(i, n, *(f"{a} {b}" for a, b in m.values()))
PY
  echo "d=$d t=$(el)"; done
echo "end t=$(el)"
