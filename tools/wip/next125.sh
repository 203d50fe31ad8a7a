#!/bin/bash
# next125 (carry .carry only): bash tools/wip/next125.sh SHA  (timeout 400) -- prepared in round 22, not run.
# Why did the streamed GEMV's six-ahead staging cost ~0.4 us a launch where the rows fit one pass (next123: Qwen3-30B-A3B
# 512.6 / 517.6 -> 526.9 / 528.0 with the plain loop)? ncu's per-instruction samples of the same launches in both builds.
# Pack first (main = the plain loop where one pass; six = tools/wip/patches/stream-six-always.patch on main):
#   tools/wip/pack-bins.sh main HEAD bw24-bench
#   git checkout -b wip/six-always && git apply tools/wip/patches/stream-six-always.patch && git commit -qam six &&
#   tools/wip/pack-bins.sh six HEAD bw24-bench && git checkout main
# Prediction: the six build's launches spend their extra time between griddepcontrol.wait and the first DP4A (the
# predicated slots and the __syncwarp), not in the ring's loop; if instead the loop's stalls grow, the cost is the
# schedule ptxas chose for the whole kernel under the new register budget (64 -> 66-68).
SHA=$1
source tools/wip/lib.sh
begin $SHA
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for b in main six; do
  timeout 150 $ncu --clock-control none --kernel-name regex:gemv_stream_kernel --launch-skip 600 --launch-count 8 \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
    -o /tmp/ncu-$b ./build-$b/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 32 -r 1 --device 0 > /tmp/ncu-$b.log 2>&1
  echo "$b ncu rc=$? t=$(el)"; tail -2 /tmp/ncu-$b.log
  $ncu -i /tmp/ncu-$b.ncu-rep --page details --csv > "$OUT/ncu-details-$b.csv" 2>/dev/null
  $ncu -i /tmp/ncu-$b.ncu-rep --page source --csv --print-source sass > /tmp/src-$b.csv 2>/dev/null
  # The prologue: instructions from the kernel's start to its first DP4A, with their warp-stall samples
  python3 - /tmp/src-$b.csv > "$OUT/prologue-$b.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next((i for i, r in enumerate(rows) if r and r[0].startswith('Address')), None)
if hdr is None: print('no source page'); sys.exit()
h = rows[hdr]; src = h.index('Source'); samp = next((i for i, c in enumerate(h) if 'Sampling' in c and 'All' in c), None)
tot = 0
for r in rows[hdr + 1:]:
    if len(r) <= src: continue
    s = int(float(r[samp] or 0)) if samp is not None else 0; tot += s
    print(f"{s:8d}  {r[src]}")
    if 'DP4A' in r[src] or 'IDP' in r[src]: break
print('prologue samples', tot)
PY
  tail -1 "$OUT/prologue-$b.txt"; grep -E "Duration|Executed Ipc A|Registers Per|Achieved Occ" "$OUT/ncu-details-$b.csv" | head -8
done
echo "end t=$(el)"
