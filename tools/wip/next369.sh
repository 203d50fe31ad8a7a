#!/bin/bash
# next369 (round 64): the acceptance JSON of the folded consumers' 1 / rms once a warp (8ad1021's device code; packed
# as base from f822861's build, its cluster-policy knob off by default), Qwen3-8B Q4_K_M f16 KV twice and q8_0 KV:
# does the f16 depth ratio (85.2-85.4 % on main) stay at 85 %?
SHA=$1
source tools/wip/lib.sh
begin $SHA-json
JSON_BUILD=base json $SHA 400 qwen3-8b:Q4_K_M ""
JSON_BUILD=base json $SHA 400 qwen3-8b:Q4_K_M "-r2"
JSON_BUILD=base json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
echo "end t=$(el)"
