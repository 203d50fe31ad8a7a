#!/bin/bash
# next14 (branch wip/wgmma; carry .deps .carry):  bash tools/wip/next14.sh <sha>  (< 10 min)
# The wgmma dense GEMM (configs 5-7 of gemm.cu's table, the pick on sm_90 for M > 64) beside main
# (.carry/main-src: fe43ecd, mma.sync pick): kernel check, GEMM microbench, GPU tests, pp512 rows.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemm gemm_multi
timeout 150 ./build-new/bw24-microbench --benchmark_filter='gemm_bf16' > "$OUT/micro-gemm-$SHA.txt" 2>&1; echo "microbench rc=$? t=$(el)"
grep gemm_bf16/ "$OUT/micro-gemm-$SHA.txt" | sed -E 's/ +/ /g; s/bytes_per_second=[^ ]* //; s/items_per_second/flop/' | cut -c1-160
P="-p 512 -n 16 -r 2 -d 0"
row main main qwen3-8b:Q4_K_M pp512 "$P"; row wg new qwen3-8b:Q4_K_M pp512 "$P"
echo "t=$(el)"
gpu_tests $SHA
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3-8b:BF16; do [ $(el) -lt 520 ] && { row main main $m pp512 "$P"; row wg new $m pp512 "$P"; }; done
echo "end t=$(el)"
