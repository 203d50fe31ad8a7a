#!/bin/bash
# next40 (main after round 10's commits; carry .deps .carry):  bash tools/wip/next40.sh <sha>  (< 9 min)
# Checks of the landed flash decode (fused RoPE, scale-plane prefetch) and acceptance JSON: Qwen3-8B Q4_K_M with
# f16 and q8_0 KV (depth ratio target 90 %), Qwen3-30B-A3B, Qwen3.5-9B, Qwen3-8B Q8_0, Qwen3.5-9B Q8_0.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA
ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 ||
  grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
kc $SHA attention qk_rope
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
for m in qwen3-8b:Q4_K_M:f16 qwen3-8b:Q4_K_M:q8_0 qwen3-30b-a3b:Q4_K_M:f16 qwen3.5-9b:Q4_K_M:f16 qwen3-8b:Q8_0:f16 \
         qwen3.5-9b:Q8_0:f16; do [ $(el) -lt 470 ] || break
  kv=${m##*:}; m=${m%:*}; f=$(echo $m | tr ':A-Z' '-a-z'); [ $kv = f16 ] || f=$f-kv-$kv
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --kv $kv --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
