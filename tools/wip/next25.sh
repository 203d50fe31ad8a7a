#!/bin/bash
# next25 (main + the int8 grouped GEMM skipping empty 16-row fragments; carry .deps .carry):  bash tools/wip/next25.sh <sha>  (< 5 min)
# Prediction: ~1/3 fewer MMAs and scale ops on Qwen3-30B-A3B's partly full expert tiles: gate-up 367 -> ~270 us.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA
ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
kc $SHA gemm_grouped moe
timeout 30 ./build-new/bw24-microbench --benchmark_filter='gemm_grouped/2/' 2>&1 | grep gemm_grouped/ | sed -E 's/ +/ /g' | cut -c1-120
P="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do row new new $m pp512 "$P"; done
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
