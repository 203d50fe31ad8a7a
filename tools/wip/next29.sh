#!/bin/bash
# next29 (main; carry .deps .carry):  bash tools/wip/next29.sh <sha>  (< 8 min)
# Where a Qwen3-30B-A3B pp512 pass and a decode step go now (per-kernel GPU time, kernels serialized):
# qwen3-8b Q4_K_M at depth 0 and 4096 (the 85 % ratio), qwen3-30b-a3b and qwen3-8b Q8_0 at depth 0. The data for the tg128 rows.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA -DBW24_TESTS=OFF
ninja -C build-new -j16 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "nsys=$NSYS ncu=$NCU"
sum() {  # csv of kernel name, time (ns) -> top 16 by total, with counts and share
  python3 - "$1" <<'PY'
import csv, sys, collections
tot = collections.Counter(); cnt = collections.Counter()
for row in csv.reader(open(sys.argv[1])):
    if len(row) < 2: continue
    try: t = float(row[1])
    except ValueError: continue
    name = row[0].split('(')[0].split('<')[0][-60:]
    tot[name] += t; cnt[name] += 1
allt = sum(tot.values())
print(f"  total {allt/1e6:.2f} ms over {sum(cnt.values())} launches")
for n, t in tot.most_common(16): print(f"  {t/1e6:8.3f} ms {100*t/allt:5.1f} % {cnt[n]:6d}x {n}")
PY
}
# spec SHAPE:QUANT:DEPTH:PROMPT:TOKENS. First the Qwen3-30B-A3B pp512 pass (its target is the one prefill row
# left), then decode (-p 16 -n 4), 4096 last: its fill passes add prefill kernels (read the split / merge rows).
for spec in qwen3-30b-a3b:Q4_K_M:0:512:1 qwen3-8b:Q4_K_M:0:16:4 qwen3-30b-a3b:Q4_K_M:0:16:4 qwen3-8b:Q8_0:0:16:4 \
            qwen3-8b:Q4_K_M:4096:16:4; do
  [ $(el) -lt 420 ] || break
  IFS=: read -r shape quant d np nn <<< "$spec"
  m=$shape-$quant-d$d-p$np
  B="./build-new/bw24-bench -m synthetic:$shape:$quant -p $np -n $nn -r 1 -d $d --device 0"
  if [ -n "$NSYS" ]; then
    timeout 150 $NSYS profile -t cuda -o /tmp/p-$m --force-overwrite true $B > /tmp/nsys-$m.log 2>&1
    timeout 60 $NSYS stats -r cuda_gpu_trace --format csv -o /tmp/t-$m /tmp/p-$m.nsys-rep > /dev/null 2>&1
    f=$(ls /tmp/t-$m*.csv | head -1)
    python3 -c "
import csv,sys
r=csv.DictReader(open('$f'))
w=csv.writer(open('/tmp/k-$m.csv','w'))
for x in r:
    if x.get('Name') and x.get('Duration (ns)') and 'memcpy' not in x['Name'].lower() and 'memset' not in x['Name'].lower(): w.writerow([x['Name'], x['Duration (ns)']])
"
  else
    timeout 200 $NCU --clock-control none --metrics gpu__time_duration.sum --csv $B > /tmp/ncu-$m.csv 2>/dev/null
    python3 -c "
import csv
w=csv.writer(open('/tmp/k-$m.csv','w'))
for x in csv.DictReader(l for l in open('/tmp/ncu-$m.csv') if l.startswith('\"')):
    if x.get('Metric Name')=='gpu__time_duration.sum': w.writerow([x['Kernel Name'], float(x['Metric Value'].replace(',',''))*(1000 if x['Metric Unit']=='usecond' else 1)])
"
  fi
  cp /tmp/k-$m.csv "$OUT/kernels-$m-$SHA.csv"; echo "$m t=$(el)"; sum /tmp/k-$m.csv
done
echo "end t=$(el)"
