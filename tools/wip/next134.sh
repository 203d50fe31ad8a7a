#!/bin/bash
# next134 (carry .carry only): bash tools/wip/next134.sh SHA  (timeout 560)
# new = wip/decode-mma (SHA): flash decode's scores and P V on tensor cores (cuda/attention/decode_mma.cuh) for f16
# and q8_0 caches at D = 128, every head count; main = a5d1ac2 (device code c7bd59c). Why: round 16's ncu put the split
# kernel at depth 4096 at ~2,550 instructions a warp, 14.5 cycles each (a chain, not bytes); the q8_0-KV depth ratio
# needs the 4,096-position increment <= 0.227 ms a token against 0.30. Prediction: the split kernel's instructions a
# warp fall ~3x; depth 4096 +4-8 % (f16 and q8_0), depth 0 +0-2 %; q8_0 ratio 87 % -> >= 90 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'head groups'
grep -E "flash_decode .*(f16|q8_0)" "$OUT/kc-attention-$SHA.txt" | head -8
gpu_tests $SHA
D4="-p 16 -n 128 -r 3 -d 4096"; D0="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in main new; do for kv in f16 q8_0; do
  [ $(el) -lt 330 ] && row "$b kv=$kv d4096" $b qwen3-8b:Q4_K_M tg128 "$D4 --kv $kv"
  [ $(el) -lt 330 ] && row "$b kv=$kv d0" $b qwen3-8b:Q4_K_M tg128 "$D0 --kv $kv"; done; done; done
for b in main new; do [ $(el) -lt 380 ] && row "$b d4096" $b qwen3-30b-a3b:Q4_K_M tg128 "$D4"; done
json $SHA 450 qwen3-8b:Q4_K_M -q8kv --kv q8_0
json $SHA 500 qwen3-8b:Q4_K_M ""
echo "end t=$(el)"
