#!/bin/bash
# next335 (round 60): wip/step-stamps: globaltimer stamps at each decode step's graph start and after its choice
# (BW24_STEP_STAMPS=1), so the gap between queued steps is measured without CUPTI (the traces' position-0 segment
# reads 37 us on the 30B, 46 on the 8B). Pack: bash tools/wip/pack-bins.sh stamps HEAD bw24-bench (on wip/step-stamps).
SHA=$1
source tools/wip/lib.sh
begin $SHA-stamps
srow() { local t=$1 m=$2 a=$3; shift 3; env "$@" timeout 90 ./build-stamps/bw24-bench -m "synthetic:$m" $a --device 0 2>&1 |
  grep -E "tg128|stamps|rror" | sed "s/^/$t $m: /"; }
for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  for v in 0 1; do srow st=$v $m "-p 512 -n 128 -r 2" BW24_STEP_STAMPS=$v; done; done
srow d4096 qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1" BW24_STEP_STAMPS=1
echo "end t=$(el)"
