#!/bin/bash
# next82 (carry .carry only):  bash tools/wip/next82.sh SHA  (timeout_s 400)
# new = wip/k-ahead SHA (4edd56f; tools/wip/patches/keys-ahead.patch, applies to main 1909a73): the split kernel's
# four-head f16 / bf16 instance at D = 128 loads each thread's key (128 bytes) into registers before the PDL wait where
# the key's row is below the step's first position (rows no kernel of the step writes); 97 -> 127 registers, still
# two CTAs an SM. main = 1909a73's bench (round 16: 8B depth 4096 / depth 0 = 84.6-84.8 % f16, bar 85 %).
# Why: round 16's ncu of the split kernel at depth 4096: ~2,000 instructions a warp at ~16 cycles, long-scoreboard
# stalls half of them; the score phase starts after the wait with a round trip for K (L2 at best).
# Prediction: ~1 us a Qwen3-8B layer at depth 4096: f16 372 -> ~376 (85 % of 439 is 373.3); q8_0 unchanged (not
# covered); depth 0 unchanged (one-head CTAs).
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "$D"; done; done
for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$D"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for b in new main; do [ $(el) -lt 330 ] && timeout 40 ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J \
  --json "$OUT/$b-$SHA-qwen3-8b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/$b /"; done
echo "end t=$(el)"
