#!/bin/bash
# next127 (carry .carry only): bash tools/wip/next127.sh  (timeout 400). next126's d2 read 3,360 bytes a row piece from
# the ql plane, so neighbouring rows' copies overlapped and a third of the Q6_K bytes came from L2: its gain does not
# separate the copy count from the bytes. d3 (wip/diag-q6k, WRONG outputs) copies each row piece as one copy of the
# tensor's own bytes, each byte once: the reads a tiled layout (a row piece's planes together) would make.
source tools/wip/lib.sh
begin next127
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for i in 1 2; do for b in main d3 d2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
echo "rows t=$(el)"
for b in main d3; do
  timeout 90 $ncu --clock-control none --kernel-name-base demangled -k regex:Q6KStream --launch-skip 100 --launch-count 36 \
    --metrics gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum --csv --print-units base \
    ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 --device 0 > /tmp/q6-$b.raw 2>&1
  grep '^"' /tmp/q6-$b.raw > /tmp/q6-$b.csv || tail -5 /tmp/q6-$b.raw
  python3 - /tmp/q6-$b.csv $b <<'PY'
import csv, sys, collections
d = collections.defaultdict(dict)
for x in csv.DictReader(open(sys.argv[1])):
    d[int(x['ID'])][x['Metric Name']] = float(x['Metric Value'].replace(',', ''))
rows = [(i, v.get('launch__grid_size', 0), v.get('gpu__time_duration.sum', 0), v.get('dram__bytes_read.sum', 0)) for i, v in sorted(d.items())]
grp = collections.defaultdict(list)
for i, g, t, b in rows: grp[(int(g), round(b / 1e6, 1))].append(t)
for (g, mb), ts in sorted(grp.items()):
    t = sum(ts) / len(ts)
    print(f"{sys.argv[2]} Q6K grid {g:4d} {mb:7.1f} MB x{len(ts):2d}: {t/1e3:7.2f} us  {mb*1e3/t:5.2f} TB/s")
if rows: open(f'/tmp/lmidx-{sys.argv[2]}', 'w').write(str(max(rows, key=lambda r: r[2])[0]))
PY
done
echo "q6k t=$(el)"
idx=$(cat /tmp/lmidx-main 2>/dev/null || echo 35)
timeout 120 $ncu --clock-control none --kernel-name-base demangled -k regex:Q6KStream --launch-skip $((100 + idx)) --launch-count 1 \
  --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
  --section MemoryWorkloadAnalysis -o /tmp/ncu-lm ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 \
  --device 0 > /tmp/ncu-lm.log 2>&1; echo "lm ncu rc=$? t=$(el)"; tail -2 /tmp/ncu-lm.log
$ncu -i /tmp/ncu-lm.ncu-rep --page details --csv > "$OUT/ncu-lm-details.csv" 2>/dev/null
python3 - "$OUT/ncu-lm-details.csv" <<'PY'
import csv, sys
for x in csv.DictReader(open(sys.argv[1])):
    n = x.get('Metric Name', '')
    if any(k in n for k in ('Duration', 'Grid Size', 'Registers', 'Achieved Occupancy', 'Warp Cycles Per Issued', 'Issue Slots Busy',
                            'DRAM Throughput', 'Memory Throughput', 'No Eligible', 'Active Warps Per Scheduler', 'Eligible Warps')):
        print(f"lm {n} = {x.get('Metric Value')} {x.get('Metric Unit')}")
PY
$ncu -i /tmp/ncu-lm.ncu-rep --page source --csv --print-source sass > /tmp/src-lm.csv 2>/dev/null
python3 - /tmp/src-lm.csv > "$OUT/lm-stalls.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next((i for i, r in enumerate(rows) if r and r[0].startswith('Address')), None)
if hdr is None: print('no source page'); sys.exit()
h = rows[hdr]; src = h.index('Source')
samp = next((i for i, c in enumerate(h) if 'Sampling' in c and 'All' in c), None)
print('columns:', h)
body = [r for r in rows[hdr + 1:] if len(r) > src and not r[0].startswith('Address')]
def num(v):
    try: return int(float(v or 0))
    except ValueError: return 0
tot = sum(num(r[samp]) for r in body) or 1
print('total samples', tot)
for n, r in enumerate(body):
    s = num(r[samp])
    print(f"{n:5d} {s:7d} {100*s/tot:5.1f}% {'*' if s > tot * 0.01 else ' '} {r[src][:100]}")
PY
grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+% \*' "$OUT/lm-stalls.txt" | head -40
echo "end t=$(el)"
