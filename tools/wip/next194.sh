#!/bin/bash
# next194 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next194.sh  (timeout 300)
# -- next193's gdn timing again at eight points per CTA, the state loads not forced before the wait (branch
# wip/gdn-timing): where the ~5 us after the wait go.
source tools/wip/lib.sh
begin next194
for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  BW24_GDN_TIMING=32 timeout 90 ./build-gdnt/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 | grep -E 'tg128|gdn timing|^  '
done
echo "end t=$(el)"
