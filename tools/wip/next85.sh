#!/bin/bash
# next85 (carry .carry only):  bash tools/wip/next85.sh SHA  (timeout_s 420)
# new = main SHA (6ab4586: keys ahead for the four-head f16 / bf16 / q8_0 instances at D = 128, history_ready from the
# runner's first group of a pass); base = 1909a73's bench (its SASS = main 7989128's for every instance these rows run).
# Verification (kernel check attention families, model [gpu] tests, GPU vs CPU) and the acceptance JSON: Qwen3-8B
# Q4_K_M -p 512 -n 128 -d 0,4096 -r 2, f16 KV twice, q8_0 KV twice, bf16 once.
# Prediction (next83/84): f16 d4096 ~388 (88 % of d0), q8_0 ~386.5 (91.4 %); d0 unchanged; 30B d4096 ~374.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
for kv in f16 q8_0; do for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 4096 --kv $kv"; done; done
for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 4096"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for i in 1 2; do for kv in f16 q8_0; do [ $(el) -lt 340 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M \
  $J --kv $kv --json "$OUT/$SHA-$i-qwen3-8b-Q4_K_M-kv-$kv-h200.json" | grep tg128 | sed "s/^/$i /"; done; done
[ $(el) -lt 360 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J --kv bf16 \
  --json "$OUT/$SHA-qwen3-8b-Q4_K_M-kv-bf16-h200.json" | grep tg128
echo "end t=$(el)"
