#!/bin/bash
# next7 (run from main; carry .deps .carry):  bash .carry/next7.sh <main sha>  (< 10 min)
# wip/routed-rows and wip/flash-q8out beside main: checks, GPU tests, A/B rows; ncu if time is left.
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
el() { echo $(( $(date +%s)-t0 )); }
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
for b in routed-rows flash-q8out; do ln -sfn $PWD/tests/data .carry/$b-src/tests/data; done
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA -DBW24_TESTS=OFF; cfg .carry/routed-rows-src build-rr rr; cfg .carry/flash-q8out-src build-fq fq
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-rr -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-fq -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(el)"
row() { local b=$1 m=$2 d=$3; timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d $d -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m d$d" '{print t " | " $7}'; }
for r in 1 2; do for b in main rr fq; do row $b qwen3-30b-a3b:Q4_K_M 0; done; done
for r in 1 2; do row main qwen3-8b:Q4_K_M 0; row fq qwen3-8b:Q4_K_M 0; done
row main qwen3-8b:Q4_K_M 4096; row fq qwen3-8b:Q4_K_M 4096
row main qwen3.6-35b-a3b:Q4_K_M 0; row rr qwen3.6-35b-a3b:Q4_K_M 0
echo "rows t=$(el)"
timeout 100 ./build-rr/bw24-kernel-check moe > "$OUT/kc-moe-rr.txt" 2>&1; echo "rr kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-rr.txt) t=$(el)"; grep -E "FAIL" "$OUT/kc-moe-rr.txt" | head -12
timeout 90 ./build-fq/bw24-kernel-check attention > "$OUT/kc-attention-fq.txt" 2>&1; echo "fq kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-fq.txt) t=$(el)"; grep -E "FAIL|differs" "$OUT/kc-attention-fq.txt" | head
for b in rr:routed-rows fq:flash-q8out; do k=${b%%:*}; d=${b#*:}
 (cd .carry/$d-src && timeout 90 ../../build-$k/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$k.txt" 2>&1; echo "$k GPU tests rc=$? t=$(el)"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$k.txt" | head -3
 (cd .carry/$d-src && timeout 100 ../../build-$k/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$k.txt" 2>&1; echo "$k GPU vs CPU rc=$? t=$(el)"); grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-$k.txt" | head -3
done
if [ $(el) -lt 480 ]; then
timeout $(( 570-$(el) )) ncu --clock-control none --kernel-name regex:gemv_q8_kernel --launch-skip 100 --launch-count 4 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  ./build-rr/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-routed-rr.txt 2>&1; echo "ncu rc=$?"
grep -E "gemv_q8_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Warp Cycles Per Issued" $OUT/ncu-routed-rr.txt | head -40
fi
echo "end t=$(el)"
