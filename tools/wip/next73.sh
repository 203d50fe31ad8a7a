#!/bin/bash
# next73 (carry .carry only):  bash tools/wip/next73.sh SHA  (timeout_s 560)
# new = wip/kv-ahead v2 (SHA): next72 measured v1 at 360.5 -> 194.6 tok/s (8B f16 d4096) and 437.8 -> 427.1 at depth 0:
# all 64 KB chunks landed on CTA 0's threads, and one SM issues bulk prefetches at ~0.3 TB/s (16.8 MB: ~66 us a layer,
# as measured). v2: 16 KB chunks, chunk j on CTA j % grid, a CTA per SM (~128 KB an SM, ~0.4 us).
# Prediction: d4096 f16 363 -> ~372, q8_0 367 -> ~376; d0 437 +- 2. Also main's depth-4096 rows with the query heads
# over 1 / 2 / 4 CTAs (BW24_FLASH_HEAD_GROUPS; same bits).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm_q8 attention
gpu_tests $SHA
D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "$D"; done; done
for b in main new; do row "$b kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done
for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; done
echo "t=$(el)"
for kv in f16 q8_0; do for g in 2 4; do [ $(el) -lt 380 ] && row "groups=$g kv=$kv" main qwen3-8b:Q4_K_M tg128 "$D --kv $kv" BW24_FLASH_HEAD_GROUPS=$g; done; done
for b in main new; do [ $(el) -lt 450 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$D"; done
echo "end t=$(el)"
