#!/bin/bash
# next361 (round 63): main's (c9549e7) Qwen3-8B acceptance JSON twice more, f16 KV: its depth ratio (85.2 % in next356)
# sits at the 85 % bar, and next359 / next360's alternated rows read 84.6-84.7 %.
# Pack: bash tools/wip/pack-bins.sh base c9549e7 bw24-bench.
SHA=$1
source tools/wip/lib.sh
begin $SHA-ratio
JSON_BUILD=base json $SHA-a 300 qwen3-8b:Q4_K_M ""
JSON_BUILD=base json $SHA-b 300 qwen3-8b:Q4_K_M ""
JSON_BUILD=base json $SHA-c 300 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
echo "end t=$(el)"
