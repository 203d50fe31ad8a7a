#!/bin/bash
# next124 (carry .carry only): bash tools/wip/next124.sh SHA  (timeout 380)
# Round 22's landed build (main SHA, five programs packed from its clean HEAD; device code = next123's C, SASS of
# gemv_q8.cu and gemv_stream.cu compared): kernel check and GPU tests, and the acceptance rows next123 did not take
# (its C rows stand for Qwen3-8B Q4_K_M and Qwen3-30B-A3B).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm moe attention gemv_q8_streamed
check_rows $SHA rmsnorm 'combine'
check_rows $SHA rmsnorm 'pos 17000'
gpu_tests $SHA
json $SHA 320 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 320 qwen3-8b:Q8_0 ""
json $SHA 320 qwen3.5-9b:Q8_0 ""
json $SHA 320 qwen3-8b:BF16 ""
json $SHA 320 qwen3.5-9b:Q4_K_M ""
json $SHA 320 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
