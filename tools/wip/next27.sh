#!/bin/bash
# next27 (branch wip/q8-lean; carry .deps .carry with .carry/main-src refreshed from main):  bash tools/wip/next27.sh <sha>  (< 6 min)
# The int8 grouped GEMM with its stage copies and scale decode planned once per thread (a row a thread pair, no
# strided loops, no divisions; Q4_K: 0 bytes of stack, was 48; main loop ~470 instructions a full stage, was ~530
# + 21 local loads). Prediction: gate-up 305 -> ~260 us, down 180 -> ~155 us; Qwen3-30B-A3B pp512 +5-8 %.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemm_grouped gemm_grouped_q8 moe
timeout 40 ./build-new/bw24-microbench --benchmark_filter='gemm_grouped/2/' 2>&1 | grep gemm_grouped/ | sed -E 's/ +/ /g' | cut -c1-120
gpu_tests $SHA
P="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do row main main $m pp512 "$P"; row new new $m pp512 "$P"; done
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
