#!/bin/bash
# next30 (branch wip/combo10 = wip/combo9 + wip/flash-pipe; carry .deps .carry with .carry/main-src refreshed from main):
#   bash tools/wip/next30.sh <sha>  (< 9 min; supersedes next28)
# Three prepared prefill changes checked and measured beside main in one call; each has its own kernel-check family:
#  - wip/q8-lean (gemm_grouped_q8): the int8 grouped GEMM's copies and scale decode planned once per thread
#  - wip/moe-group (moe): moe_group placing pairs from 8 warps
#  - wip/flash-pipe (flash_prefill): f16 tiles by cp.async one key tile ahead, f16 MMAs
# Predictions: gate-up 305 -> ~260 us; Qwen3-30B-A3B pp512 12.1k -> ~14k; Qwen3-8B Q4_K_M pp512 22.7k -> ~23.5k.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemm_grouped gemm_grouped_q8 moe flash_prefill
timeout 40 ./build-new/bw24-microbench --benchmark_filter='gemm_grouped/[23]/' 2>&1 | grep gemm_grouped/ | sed -E 's/ +/ /g' | cut -c1-120
gpu_tests $SHA; grep -E "qwen3moe" "$OUT/gpu-tests-$SHA.txt" | cut -c1-150
P="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do row main main $m pp512 "$P"; row new new $m pp512 "$P"; done
echo "rows t=$(el)"
for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:BF16; do [ $(el) -lt 470 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z'); timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
