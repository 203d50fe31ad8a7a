#!/bin/bash
# next35 (branch wip/fdec; carry .deps .carry with .carry/main-src refreshed from main):  bash tools/wip/next35.sh <sha>  (< 5 min)
# next34 with no prefetch while a single split is visible (depth 0 read 393.7 -> 388.7 in next34).

# Kernel check attention; tg128 rows main / new twice each at depth 0 / 4096; q8_0 KV; JSON of Qwen3-8B Q4_K_M.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check
kc $SHA attention
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do row main main qwen3-8b:Q4_K_M tg128 "$P"; row new new qwen3-8b:Q4_K_M tg128 "$P"; done
row new new qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"
echo "rows t=$(el)"
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do [ $(el) -lt 330 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z'); timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
