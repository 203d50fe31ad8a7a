#!/bin/bash
# next188 (carry .carry/bins, .carry/rtlib and the stories260K files; trace left out for room): bash tools/wip/next188.sh
# SHA  (timeout 520) -- round 32's landed tree (main 63ba9fb: the typed delta-net decode kernel, flash decode's
# kQ8Step instances): GPU tests, kernel check gdn / attention_rope / attention_bound on the landed binary, then the
# acceptance rows (JSON), most needed first.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
kc_one $SHA gdn attention_rope attention_bound
echo "int8 O rows: $(grep -c 'int8 O fused' $OUT/kc-gdn-$SHA.txt), not ok: $(grep 'int8 O fused' $OUT/kc-gdn-$SHA.txt | grep -vc ' ok ')"
json $SHA 420 qwen3.5-9b:Q4_K_M ""
json $SHA 420 qwen3-8b:Q4_K_M ""
json $SHA 420 qwen3-30b-a3b:Q4_K_M ""
json $SHA 420 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 420 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
echo "end t=$(el)"
