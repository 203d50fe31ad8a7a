#!/bin/bash
# next181 (carry .carry only): bash tools/wip/next181.sh SHA  (timeout 520) -- round 31: the landed flash decode change
# (884b882 = d1794d8's tree): GPU tests, then the acceptance rows (JSON), most needed first.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
cat $OUT/gpu-tests-$SHA.txt | grep -E "passed|failed|FAILED|SKIPPED" | head -20; rm $OUT/gpu-tests-$SHA.txt  # eight files a call
json $SHA 380 qwen3-8b:Q4_K_M ""
json $SHA 380 qwen3.5-9b:Q4_K_M ""
json $SHA 380 qwen3-30b-a3b:Q4_K_M ""
json $SHA 380 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 380 qwen3.5-9b:Q8_0 ""
json $SHA 380 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 380 qwen3-8b:BF16 ""
echo "end t=$(el)"
