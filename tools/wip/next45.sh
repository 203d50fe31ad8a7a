#!/bin/bash
# next45 (branch wip/combine after next44; carry .deps .carry):  bash tools/wip/next45.sh <sha>  (< 8 min)
# gemv_q8_combine limited to k <= 8 (next44's kernel check: the k = 10 case lost pairs 8 and 9 to the one-pair-a-warp
# form); its kernel check and the GPU tests again, then the acceptance JSON of the two MoE rows.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA
ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
kc $SHA moe
grep -E "moe down" "$OUT/kc-moe-$SHA.txt" | head -30
gpu_tests $SHA
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do [ $(el) -lt 420 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z')
  timeout 120 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
