#!/bin/bash
# next6a (run from main; carry .deps .carry):   bash .carry/next6a.sh <main sha>   (~6 min)
# wip/routed-rows (routed down projections four rows a warp) and wip/routed-lb (launch bound 5 / 6 CTAs a SM for
# one-token int8 launches) beside main: kernel check moe + GPU tests of routed-rows, Qwen3-30B-A3B / 35B-A3B rows,
# ncu of the routed GEMVs of routed-rows.
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
for b in routed-rows routed-lb; do ln -sfn $PWD/tests/data .carry/$b-src/tests/data; done
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA -DBW24_TESTS=OFF; cfg .carry/routed-rows-src build-rr rr
cfg .carry/routed-lb-src build-lb5 lb5 -DBW24_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DBW24_ROUTED_CTAS=5
cfg .carry/routed-lb-src build-lb6 lb6 -DBW24_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DBW24_ROUTED_CTAS=6
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-rr -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-lb5 -j16 bw24-bench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
( ninja -C build-lb6 -j16 bw24-bench > /tmp/b4.log 2>&1 || grep -A3 error /tmp/b4.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
timeout 120 ./build-rr/bw24-kernel-check moe > "$OUT/kc-moe-rr.txt" 2>&1; echo "rr kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-rr.txt)"; grep -E "FAIL" "$OUT/kc-moe-rr.txt" | head -12
(cd .carry/routed-rows-src && timeout 90 ../../build-rr/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-rr.txt" 2>&1; echo "rr GPU tests rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-rr.txt" | head -3
(cd .carry/routed-rows-src && timeout 120 ../../build-rr/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-rr.txt" 2>&1; echo "rr GPU vs CPU rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-rr.txt" | head -3
echo "t=$(( $(date +%s)-t0 ))"
row() { local b=$1 m=$2; timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m" '{print t " | " $7}'; }
for r in 1 2; do for b in main rr lb5 lb6; do row $b qwen3-30b-a3b:Q4_K_M; done; done
row main qwen3.6-35b-a3b:Q4_K_M; row rr qwen3.6-35b-a3b:Q4_K_M
echo "t=$(( $(date +%s)-t0 ))"
timeout 100 ncu --clock-control none --kernel-name regex:gemv_q8_kernel --launch-skip 100 --launch-count 4 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  ./build-rr/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-routed-rr.txt 2>&1; echo "ncu rc=$?"
grep -E "gemv_q8_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Warp Cycles Per Issued" $OUT/ncu-routed-rr.txt | head -40
echo "t=$(( $(date +%s)-t0 ))"
