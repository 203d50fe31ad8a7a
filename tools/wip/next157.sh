#!/bin/bash
# next157 (carry .carry only): bash tools/wip/next157.sh SHA  (timeout 560) -- round 28: flash decode's own key from a
# shared-memory mirror (branch wip/kv-rows a7b9085: the writer stores the key's cache bytes, f16 or q8_0, into the CTA's
# shared memory too; the score phase reads the token's own key there instead of from L2 after the barrier).
# main = e2b116b's bench (4b125ca's device code), base = 01be39b (the value row with the key row, next156).
# Pack: tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check; base--bw24-bench.xz = next156's new bench.
# Expect: kernel check attention / attention_rope / attention_bound / qk_rope all ok. Prediction: one L2 round trip
# (~0.5 us) off flash decode's chain a layer: Qwen3-8B Q4_K_M tg128 +0.5-1 % over base, Qwen3-30B-A3B +0.5-1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound qk_rope; check_rows $SHA attention 'head groups'
for i in 1 2; do for b in main base new; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 360 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in base new; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 440 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done
for b in main new; do [ $(el) -lt 480 ] && row $b-q8kv $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 --kv q8_0"; done
for b in main new; do [ $(el) -lt 510 ] && row $b-q8kv-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2 -d 4096 --kv q8_0"; done
echo "end t=$(el)"
