#!/bin/bash
# next10 (run from branch wgstage; carry .deps .carry):  bash .carry/next10.sh <sha>  (< 6 min)
# routed Q4_K gate-up through shared memory (this tree) beside main (.carry/main-src): checks, rows, JSON.
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
el() { echo $(( $(date +%s)-t0 )); }
mkdir -p ../shared/models/reference && cp .carry/stories260K.gguf ../shared/models/ && cp .carry/stories260K_greedy_reference.json ../shared/models/reference/
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $SHA
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
wait; echo "built t=$(el)"
timeout 100 ./build-new/bw24-kernel-check moe > "$OUT/kc-moe-$SHA.txt" 2>&1; echo "kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-moe-$SHA.txt" | head -12
row() { local b=$1 m=$2 d=$3; timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d $d -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m d$d" '{print t " | " $7}'; }
for r in 1 2; do for b in main new; do row $b qwen3-30b-a3b:Q4_K_M 0; done; done
row new qwen3.6-35b-a3b:Q4_K_M 0
echo "rows t=$(el)"
timeout 90 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 100 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-$SHA.txt" | head -3
for sq in qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 250 ] || break
  timeout $(( 325-$(el) )) ./build-new/bw24-bench -m synthetic:$sq -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json $OUT/2026-11-30-$SHA-${sq/:/-}-h200.json 2>&1 | grep "^| synth"; echo "json t=$(el)"
done
if [ $(el) -lt 285 ]; then
timeout $(( 325-$(el) )) ncu --clock-control none --kernel-name regex:gemv_q8_kernel --launch-skip 100 --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-routed-$SHA.txt 2>&1; echo "ncu rc=$?"
grep -E "gemv_q8_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size" $OUT/ncu-routed-$SHA.txt | cut -c1-150 | head -30
fi
echo "end t=$(el)"
