#!/bin/bash
# next78 (carry .carry only):  bash tools/wip/next78.sh SHA  (timeout_s 300)
# g4 = ffff370 (the split kernel's four-head instance, the query rows' pad, sum_warps in vectors; kernel check
# attention 551/551, attention_rope 180/180, attention_bound 6/6, GPU tests passed in next76). next77: the occupancy
# rule for head groups (8c099a0) was no faster (8B d4096 372.6 vs 372.1) and slower on the 9B (424.1 -> 407.7): dropped.
# The acceptance JSON rows the four-head instance moves: Qwen3-8B f16 and q8_0 KV, Qwen3-30B-A3B, Qwen3.5-9B.
SHA=$1
source tools/wip/lib.sh
begin $SHA
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
run() { timeout 80 ./build-g4/bw24-bench -m synthetic:$1 $J "${@:3}" --json "$OUT/$SHA-$2-h200.json" | grep -E "tg128|pp512"; echo "t=$(el)"; }
run qwen3-8b:Q4_K_M qwen3-8b-Q4_K_M
run qwen3-8b:Q4_K_M qwen3-8b-Q4_K_M-kv-Q8_0 --kv q8_0
run qwen3-30b-a3b:Q4_K_M qwen3-30b-a3b-Q4_K_M
[ $(el) -lt 200 ] && run qwen3.5-9b:Q4_K_M qwen3.5-9b-Q4_K_M
echo "end t=$(el)"
