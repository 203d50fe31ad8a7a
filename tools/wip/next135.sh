#!/bin/bash
# next135 (carry .carry only): bash tools/wip/next135.sh SHA  (timeout 400)
# new = wip/decode-mma + the values loaded before the softmax (SHA); base = next134's new (the tensor-core products).
# Prediction: the values' L2 round trip under the softmax's barriers: depth 4096 +0.5-1.5 %, depth 0 +0-0.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'head groups'
gpu_tests $SHA
D4="-p 16 -n 128 -r 3 -d 4096"; D0="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do for kv in f16 q8_0; do
  [ $(el) -lt 250 ] && row "$b kv=$kv d4096" $b qwen3-8b:Q4_K_M tg128 "$D4 --kv $kv"
  [ $(el) -lt 250 ] && row "$b kv=$kv d0" $b qwen3-8b:Q4_K_M tg128 "$D0 --kv $kv"; done; done; done
json $SHA 300 qwen3-8b:Q4_K_M -q8kv --kv q8_0
echo "end t=$(el)"
