#!/bin/bash
# next28 (branch wip/combo9 = wip/q8-lean + wip/moe-group; carry .deps .carry with .carry/main-src refreshed from main):
#   bash tools/wip/next28.sh <sha>  (< 7 min)
# Both MoE prefill changes prepared at the end of round 8, checked and measured beside main in one call:
#  - wip/q8-lean: the int8 grouped GEMM's copies and scale decode planned once per thread (no spills for Q4_K)
#  - wip/moe-group: moe_group placing pairs from 8 warps (35 us -> a few us a layer)
# Predictions: gate-up 305 -> ~260 us, down 180 -> ~155 us; Qwen3-30B-A3B pp512 12.1k -> ~13.5k; Qwen3.6-35B-A3B 8.3k -> ~9k.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemm_grouped gemm_grouped_q8 moe
timeout 40 ./build-new/bw24-microbench --benchmark_filter='gemm_grouped/[23]/' 2>&1 | grep gemm_grouped/ | sed -E 's/ +/ /g' | cut -c1-120
gpu_tests $SHA; grep -E "qwen3moe" "$OUT/gpu-tests-$SHA.txt" | cut -c1-150
P="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do row main main $m pp512 "$P"; row new new $m pp512 "$P"; done
for m in qwen3-30b-a3b qwen3.6-35b-a3b; do [ $(el) -lt 480 ] || break
  timeout 90 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$m-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
