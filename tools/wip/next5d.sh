#!/bin/bash
# next5d (run from main; carry .deps .carry): exp-a (routed GEMV prefetch after the id) and exp-c (+ moe_gate:
# router product and routing in one launch) beside main; checks, GPU tests of exp-c, rows, acceptance JSON.
SHA=$1 CSHA=$2
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
for b in a c; do ln -sfn $PWD/tests/data .carry/$b-src/tests/data; done
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 $4 > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA -DBW24_TESTS=OFF; cfg .carry/a-src build-a expa -DBW24_TESTS=OFF; cfg .carry/c-src build-c $CSHA
( ninja -C build-main -j16 bw24-bench bw24-kernel-check > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-a -j16 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-c -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
timeout 60 ./build-main/bw24-kernel-check attention > "$OUT/kc-attention-main.txt" 2>&1; echo "main kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-main.txt)"
timeout 120 ./build-c/bw24-kernel-check moe > "$OUT/kc-moe-c.txt" 2>&1; echo "c kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-c.txt)"; grep -E "FAIL|moe_gate" "$OUT/kc-moe-c.txt" | head -12
(cd .carry/c-src && timeout 90 ../../build-c/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-c.txt" 2>&1; echo "c GPU tests rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-c.txt" | head -3
(cd .carry/c-src && timeout 120 ../../build-c/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-c.txt" 2>&1; echo "c GPU vs CPU rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-c.txt" | head -3
echo "t=$(( $(date +%s)-t0 ))"
row() { local b=$1 m=$2; timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m" '{print t " | " $7}'; }
row main qwen3-30b-a3b:Q4_K_M; row a qwen3-30b-a3b:Q4_K_M; row c qwen3-30b-a3b:Q4_K_M; row main qwen3-30b-a3b:Q4_K_M; row c qwen3-30b-a3b:Q4_K_M
row main qwen3.6-35b-a3b:Q4_K_M; row c qwen3.6-35b-a3b:Q4_K_M
echo "t=$(( $(date +%s)-t0 ))"
timeout 60 ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$SHA-qwen3-8b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
timeout 90 ./build-main/bw24-bench -m synthetic:qwen3.5-9b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$SHA-qwen3.5-9b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
timeout 90 ./build-c/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$CSHA-qwen3-30b-a3b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "t=$(( $(date +%s)-t0 ))"
# The routed GEMVs in detail (for the next session): 4 launches of gemv_q8_kernel in a 30B decode (gate-up and down).
timeout 100 ncu --clock-control none --kernel-name regex:gemv_q8_kernel --launch-skip 100 --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
  ./build-c/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-routed-detail.txt 2>&1; echo "ncu routed rc=$?"
grep -E "gemv_q8_kernel|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Stall|Warp Cycles Per Issued" $OUT/ncu-routed-detail.txt | head -60
echo "t=$(( $(date +%s)-t0 ))"
