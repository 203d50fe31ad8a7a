#!/bin/bash
# next14 (branch wip/wgmma; carry .deps .carry):  bash tools/wip/next14.sh <sha>  (< 10 min)
# The wgmma dense GEMM (configs 5-7 of gemm.cu's table, the pick on sm_90 for M > 64) beside main
# (.carry/main-src: fe43ecd, mma.sync pick): kernel check, GEMM microbench, GPU tests, pp512 rows.
SHA=$1
source tools/wip/lib.sh
cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $SHA
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
wait; echo "built t=$(el)"
for f in gemm gemm_multi; do timeout 120 ./build-new/bw24-kernel-check $f > "$OUT/kc-$f-$SHA.txt" 2>&1; echo "kernel-check $f rc=$? $(tail -n 1 $OUT/kc-$f-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$SHA.txt" | head -12; done
timeout 150 ./build-new/bw24-microbench --benchmark_filter='gemm_bf16' > "$OUT/micro-gemm-$SHA.txt" 2>&1; echo "microbench rc=$? t=$(el)"
grep gemm_bf16/ "$OUT/micro-gemm-$SHA.txt" | sed -E 's/ +/ /g; s/bytes_per_second=[^ ]* //; s/items_per_second/flop/' | cut -c1-160
P="-p 512 -n 16 -r 2 -d 0"
row main main qwen3-8b:Q4_K_M pp512 "$P"; row wg new qwen3-8b:Q4_K_M pp512 "$P"
echo "t=$(el)"
timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 120 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|passed|failed|gpu vs" "$OUT/gpu-vs-cpu-$SHA.txt" | head -40
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3-8b:BF16; do [ $(el) -lt 520 ] && { row main main $m pp512 "$P"; row wg new $m pp512 "$P"; }; done
echo "end t=$(el)"
