#!/bin/bash
# next91 (carry .carry only):  bash tools/wip/next91.sh SHA  (timeout_s 420)
# new = wip/v-smem SHA (ddeb7b1, on main bebbc85): values ahead — the f16 / bf16 instances of keys ahead (one and four
# heads a CTA, D = 128) also copy the split's V rows below the call's first position into 32 KB of dynamic shared
# memory by cp.async before the PDL wait (no registers held: f16 four-head 127 -> 126, one-head 94 -> 80); the P V
# phase reads them there instead of an L2 round trip per 8 keys a lane. base = main 9e0707c's bench (SASS of main).
# Why: keys ahead took the score phase's first round trip off the chain (2.8 us a layer at depth 4096, round 17); the
# P V phase still starts with one (two rounds of 8 keys a lane at a full split).
# Prediction: ~1 us a layer: Qwen3-8B f16 depth 4096 388 -> ~394, depth 0 456 -> ~460; q8_0 unchanged (not covered).
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
for i in 1 2; do for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 4096"; done; done
for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 4096"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for b in new base; do [ $(el) -lt 300 ] && timeout 40 ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J \
  --json "$OUT/$b-$SHA-qwen3-8b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/$b /"; done
[ $(el) -lt 330 ] && timeout 40 ./build-base/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J --kv q8_0 \
  --json "$OUT/base-$SHA-qwen3-8b-Q4_K_M-kv-q8_0-h200.json" | grep tg128 | sed "s/^/base /"
[ $(el) -lt 350 ] && timeout 60 ./build-base/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M $J \
  --json "$OUT/base-$SHA-qwen3-30b-a3b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/base /"
echo "end t=$(el)"
