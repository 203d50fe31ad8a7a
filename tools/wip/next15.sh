#!/bin/bash
# next15 (main at the wgmma commit; carry .deps .carry):  bash tools/wip/next15.sh <sha>  (< 10 min)
# The landed wgmma GEMM (with the 128 x 256 pick) beside .carry/main-src (fe43ecd, mma.sync):
# kernel check, the pick's microbench rows, GPU tests, pp512 rows, acceptance JSON.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemm gemm_multi
timeout 60 ./build-new/bw24-microbench --benchmark_filter='gemm_bf16/.*/-1/' > "$OUT/micro-gemm-$SHA.txt" 2>&1; echo "microbench rc=$? t=$(el)"
grep gemm_bf16/ "$OUT/micro-gemm-$SHA.txt" | sed -E 's/ +/ /g' | awk '{print $1, $2, $3, $(NF-1)}'
gpu_tests $SHA
P="-p 512 -n 16 -r 2 -d 0"
row main main qwen3-8b:Q4_K_M pp512 "$P"; row wg new qwen3-8b:Q4_K_M pp512 "$P"; row wg new qwen3-8b:BF16 pp512 "$P"
echo "t=$(el)"
for m in qwen3-8b qwen3.5-9b qwen3-30b-a3b; do [ $(el) -lt 470 ] || break
  timeout 120 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$m-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
