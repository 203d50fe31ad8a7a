#!/bin/bash
# next126 (carry .carry only): bash tools/wip/next126.sh  (timeout 580). Round 23's first call, diagnostics only.
# Packed: main (b1dbe9d), six (next125's: six ahead on every streamed launch), d1 / d2 (wip/diag-q6k: timing builds of
# main with WRONG Q6_K outputs: d1 stages only the ql and qh planes, 16 bulk copies a stage instead of 32; d2 copies each
# row piece as one 3,360-byte copy from the ql plane, 8 copies a stage, the same bytes).
# Question 1: does the Q6_K stream (lm_head 2.6 TB/s alone, downs 1.8 TB/s) pay per bulk copy? If d2's lm_head runs
# near the copy rate (~4 TB/s), a row piece stored contiguously (one copy) is worth a repack.
# Question 2 (next125 as prepared): where the six-ahead form's ~0.4 us a launch goes.
# Question 3: the lm_head's warp stalls by instruction (main).
source tools/wip/lib.sh
begin next126
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for i in 1 2; do for b in main d1 d2; do
  row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; row $b $b qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done; done
echo "rows t=$(el)"
# Q6_K launches of one step: duration, grid, DRAM bytes
for b in main d1 d2; do
  timeout 90 $ncu --clock-control none -k regex:Q6KStream --launch-skip 100 --launch-count 36 \
    --metrics gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum --csv --print-units base \
    ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 --device 0 2>/dev/null |
    grep '^"' > /tmp/q6-$b.csv
  python3 - /tmp/q6-$b.csv $b <<'PY'
import csv, sys, collections
d = collections.defaultdict(dict)
for x in csv.DictReader(open(sys.argv[1])):
    d[int(x['ID'])][x['Metric Name']] = float(x['Metric Value'].replace(',', ''))
rows = [(i, v.get('launch__grid_size', 0), v.get('gpu__time_duration.sum', 0), v.get('dram__bytes_read.sum', 0)) for i, v in sorted(d.items())]
big = max(rows, key=lambda r: r[2]) if rows else None
grp = collections.defaultdict(list)
for i, g, t, b in rows: grp[(int(g), round(b / 1e6))].append(t)
for (g, mb), ts in sorted(grp.items()):
    print(f"{sys.argv[2]} Q6K grid {g:4d} {mb:5d} MB x{len(ts):2d}: {sum(ts)/len(ts)/1e3:7.2f} us  {mb*1e6/(sum(ts)/len(ts))/1e3:5.2f} TB/s")
if big: open(f'/tmp/lmidx-{sys.argv[2]}', 'w').write(str(big[0]))
PY
done
echo "q6k t=$(el)"
# the lm_head's stalls by instruction (main)
idx=$(cat /tmp/lmidx-main 2>/dev/null || echo 35)
timeout 120 $ncu --clock-control none -k regex:Q6KStream --launch-skip $((100 + idx)) --launch-count 1 \
  --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
  --section MemoryWorkloadAnalysis -o /tmp/ncu-lm ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 32 -r 1 \
  --device 0 > /tmp/ncu-lm.log 2>&1; echo "lm ncu rc=$? t=$(el)"
$ncu -i /tmp/ncu-lm.ncu-rep --page details --csv > "$OUT/ncu-lm-details.csv" 2>/dev/null
grep -E '"(Duration|Executed Ipc Active|Registers Per Thread|Achieved Occupancy|Grid Size|Warp Cycles Per Issued Instruction|Issue Slots Busy|Memory Throughput|DRAM Throughput|No Eligible|One or More Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler)"' "$OUT/ncu-lm-details.csv" | awk -F'","' '{print $(NF-2) " = " $NF}' | head -20
$ncu -i /tmp/ncu-lm.ncu-rep --page source --csv --print-source sass > /tmp/src-lm.csv 2>/dev/null
python3 - /tmp/src-lm.csv > "$OUT/lm-stalls.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next((i for i, r in enumerate(rows) if r and r[0].startswith('Address')), None)
if hdr is None: print('no source page'); sys.exit()
h = rows[hdr]; src = h.index('Source')
samp = next((i for i, c in enumerate(h) if 'Sampling' in c and 'All' in c), None)
reasons = [i for i, c in enumerate(h) if c.startswith('stall_') or 'Stall' in c]
print('columns:', [h[i] for i in reasons][:40])
body = [r for r in rows[hdr + 1:] if len(r) > src]
tot = sum(int(float(r[samp] or 0)) for r in body) or 1
print('total samples', tot)
for n, r in enumerate(body):
    s = int(float(r[samp] or 0))
    mark = '*' if s > tot * 0.01 else ' '
    print(f"{n:5d} {s:7d} {100*s/tot:5.1f}% {mark} {r[src][:90]}")
PY
grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+% \*' "$OUT/lm-stalls.txt" | head -40
echo "lm t=$(el)"
# next125: the 30B's streamed launches, plain loop (main) against six ahead everywhere (six)
for b in main six; do [ $(el) -lt 420 ] || break
  timeout 70 $ncu --clock-control none --kernel-name regex:gemv_stream_kernel --launch-skip 600 --launch-count 4 \
    --section LaunchStats --section WarpStateStats --section SourceCounters \
    -o /tmp/ncu-$b ./build-$b/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 32 -r 1 --device 0 > /tmp/ncu-$b.log 2>&1
  echo "$b ncu rc=$? t=$(el)"
  $ncu -i /tmp/ncu-$b.ncu-rep --page details --csv 2>/dev/null | grep -E '"(Duration|Registers Per Thread|Warp Cycles Per Issued Instruction)"' | awk -F'","' '{print $5 " " $(NF-2) " = " $NF}' | head -12
  $ncu -i /tmp/ncu-$b.ncu-rep --page source --csv --print-source sass > /tmp/src-$b.csv 2>/dev/null
  python3 - /tmp/src-$b.csv > "$OUT/prologue-$b.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next((i for i, r in enumerate(rows) if r and r[0].startswith('Address')), None)
if hdr is None: print('no source page'); sys.exit()
h = rows[hdr]; src = h.index('Source'); samp = next((i for i, c in enumerate(h) if 'Sampling' in c and 'All' in c), None)
body = [r for r in rows[hdr + 1:] if len(r) > src]
allt = sum(int(float(r[samp] or 0)) for r in body) or 1
tot = 0
for r in body:
    s = int(float(r[samp] or 0)); tot += s
    print(f"{s:8d}  {r[src]}")
    if 'DP4A' in r[src] or 'IDP' in r[src]: break
print(f'prologue samples {tot} of {allt} ({100*tot/allt:.1f} %)')
PY
  tail -1 "$OUT/prologue-$b.txt"
done
echo "end t=$(el)"
