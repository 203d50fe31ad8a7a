#!/bin/bash
# next131 (carry .carry only): bash tools/wip/next131.sh SHA  (timeout 330). Round 23's landed Q6_K tiles (c7bd59c's
# device code): a second sample of the Qwen3-8B depth rows (next130: f16 440.5 / 518.0 = 85.0 %, q8_0 KV 425.3 / 488.3
# = 87.1 %), then where a Qwen3-8B Q4_K_M decode step goes now (ncu, kernels serialized) for the next round.
SHA=$1
source tools/wip/lib.sh
begin next131
json $SHA 200 qwen3-8b:Q4_K_M -kv-q8_0-sample2 --kv q8_0
json $SHA 200 qwen3-8b:Q4_K_M -sample2
[ $(el) -lt 220 ] && NCU_RANGE="--launch-skip 3000 --launch-count 700" breakdown 8b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
echo "end t=$(el)"
