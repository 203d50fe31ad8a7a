#!/bin/bash
# next98 (carry .carry only): bash tools/wip/next98.sh SHA  (timeout_s 240)
# The acceptance JSON of the MoE shapes with wip/chunk8 SHA's bench (its default path: Q6_K 8-block pieces for
# rows of <= 8 blocks, the code main lands), Qwen3-30B-A3B and Qwen3.6-35B-A3B Q4_K_M.
SHA=$1
source tools/wip/lib.sh
begin $SHA-next98
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for m in qwen3-30b-a3b qwen3.6-35b-a3b; do [ $(el) -lt 150 ] &&
  timeout 90 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M $J --json "$OUT/$SHA-$m-Q4_K_M-h200.json" | grep -E "tg128|pp512"; done
echo "end t=$(el)"
