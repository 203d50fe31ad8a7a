#!/bin/bash
# next64 (carry .carry only):  bash tools/wip/next64.sh <sha>  (< 3 min; timeout_s 240)
# The acceptance rows next63 did not take, from new = 27ef5c4 (main's device code after round 14): Qwen3-8B
# Q4_K_M with the q8_0 KV cache (depth 4096 / depth 0 >= 90 %: round 14 raised depth 0 and left 4096, as with f16),
# and the recorded Qwen3.5-27B row (last run at round 9).
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
timeout 100 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --kv q8_0 --device 0 \
  --json "$OUT/qwen3-8b-Q4_K_M-kv-Q8_0-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"
timeout 130 ./build-new/bw24-bench -m synthetic:qwen3.5-27b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3.5-27b-Q4_K_M-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "end t=$(el)"
