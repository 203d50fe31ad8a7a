#!/bin/bash
# next151 (carry .carry only): bash tools/wip/next151.sh SHA [CACHE]  (timeout 300) -- round 27: the streamed Q4_K GEMV's SASS
# by instruction (executed counts, stall samples): one Qwen3-8B Q4_K down (the 6th add launch) and one gate-up, ncu
# --set full into a report, then its source page (SASS) as CSV. new = main's bench. CACHE: ncu's --cache-control,
# all (default: caches flushed between passes) or none (next152: L2 kept, as the graph's activations are).
SHA=$1 CACHE=${2:-all}
source tools/wip/lib.sh
begin $SHA
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { local tag=$1 re=$2 skip=$3
  timeout 120 $ncu --clock-control none --cache-control $CACHE --kernel-name-base demangled -k "regex:$re" --launch-skip $skip --launch-count 1 \
    --set full --import-source no -o /tmp/$tag ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 4 -r 1 \
    --device 0 > /tmp/$tag.log 2>&1; echo "$tag rc=$? t=$(el)"; tail -2 /tmp/$tag.log
  $ncu -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > $OUT/sass-$tag.csv 2>&1
  $ncu -i /tmp/$tag.ncu-rep --page details --print-details all > $OUT/details-$tag.txt 2>&1
  wc -l $OUT/sass-$tag.csv $OUT/details-$tag.txt; head -3 $OUT/sass-$tag.csv | cut -c1-600
}
prof q4k-down 'KQuantStream<.bool.0>, .bw24::cuda::GemvOut.1' 5
prof q4k-gateup 'KQuantStream<.bool.0>, .bw24::cuda::GemvOut.2' 0
echo "end t=$(el)"
