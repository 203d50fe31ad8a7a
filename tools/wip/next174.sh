#!/bin/bash
# next174 (carry .carry only): bash tools/wip/next174.sh SHA  (timeout 400) -- the tip's GPU tests and the rest of the
# acceptance JSON. Programs: new = HEAD's bench, GPU tests and libbw24.so.0 (pack-bins.sh new HEAD ...).
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
json $SHA 250 qwen3-30b-a3b:Q4_K_M ""
json $SHA 280 qwen3-8b:Q8_0 ""
json $SHA 300 qwen3.5-9b:Q8_0 ""
json $SHA 320 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 340 qwen3.5-27b:Q4_K_M ""
echo "end t=$(el)"
