#!/bin/bash
# next41 (branch wip/rope-ang; carry .deps .carry):  bash tools/wip/next41.sh <sha>  (< 9 min)
# Before the call, here:  d=.carry/main-src; rm -rf $d && mkdir -p $d && git archive land11 | tar -x -C $d --exclude=tests/data
# main = land11 (round 10: fused RoPE, scale-plane prefetch); new = + the RoPE angles' double sincos before the PDL
# wait (qk_rope_store and the fused flash decode), shared by query and key. The fused form cost Qwen3-30B-A3B at depth 0
# (363 -> 356; G = 8: warp 0 rotates its query and then the key, two sincos chains after the wait).
# Prediction: 8B +~1 %, 30B depth 0 back to ~363 or above.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA attention qk_rope
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0,4096"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for b in main new; do row $b $b $m tg128 "$P"; done; done; done
echo "rows t=$(el)"
for m in qwen3-8b:Q4_K_M:f16 qwen3-30b-a3b:Q4_K_M:f16 qwen3-8b:Q4_K_M:q8_0; do [ $(el) -lt 400 ] || break
  kv=${m##*:}; m=${m%:*}; f=$(echo $m | tr ':A-Z' '-a-z'); [ $kv = f16 ] || f=$f-kv-$kv
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --kv $kv --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
