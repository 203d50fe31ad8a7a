#!/bin/bash
# next75 (carry .carry only):  bash tools/wip/next75.sh SHA  (timeout_s 300)
# next74: at depth 4096 the split kernel takes 21.4 us a Qwen3-8B layer (ncu, serialized) for 16.9 MB (0.79 TB/s; the
# one-head instance at depth 0: 9.8 us for 0.1 MB), the merge kernel 5.8 us. Why: ncu's full set on one split kernel
# (and one merge kernel) at depth 4096, f16 and q8_0 caches.
SHA=$1
source tools/wip/lib.sh
begin $SHA
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for kv in f16 q8_0; do
  timeout 100 $ncu --clock-control none --set full --import-source no -k regex:"split_kernel|merge_kernel" --launch-skip 300 --launch-count 2 \
    ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 16 -r 1 -d 4096 --kv $kv --device 0 > "$OUT/ncu-full-$kv-$SHA.txt" 2>&1
  grep -E "^  [a-z].*split_kernel|^  [a-z].*merge_kernel|Duration|Registers Per|Warp Cycles Per Issued|Achieved Occ|DRAM Through|Memory Throughput|L2 Hit|Waves Per|Block Limit|Theoretical Occ|Executed Ipc A|Stall" "$OUT/ncu-full-$kv-$SHA.txt" | head -40
  echo "kv=$kv t=$(el)"; done
