#!/bin/bash
# next6b (run from main; carry .deps .carry):   bash .carry/next6b.sh <main sha>   (~5 min)
# wip/flash-q8out (flash decode writes the output projection's int8 input; no rmsnorm_q8 launch for it) beside main.
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
ln -sfn $PWD/tests/data .carry/flash-q8out-src/tests/data
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA -DBW24_TESTS=OFF; cfg .carry/flash-q8out-src build-fq fq
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-fq -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
timeout 90 ./build-fq/bw24-kernel-check attention > "$OUT/kc-attention-fq.txt" 2>&1; echo "fq kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-fq.txt)"; grep -E "FAIL|differs" "$OUT/kc-attention-fq.txt" | head
(cd .carry/flash-q8out-src && timeout 90 ../../build-fq/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-fq.txt" 2>&1; echo "fq GPU tests rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-fq.txt" | head -3
(cd .carry/flash-q8out-src && timeout 120 ../../build-fq/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-fq.txt" 2>&1; echo "fq GPU vs CPU rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-fq.txt" | head -3
row() { local b=$1 m=$2 d=$3; timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d $d -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m d$d" '{print t " | " $7}'; }
for r in 1 2; do row main qwen3-8b:Q4_K_M 0; row fq qwen3-8b:Q4_K_M 0; done
row main qwen3-8b:Q4_K_M 4096; row fq qwen3-8b:Q4_K_M 4096
row main qwen3-30b-a3b:Q4_K_M 0; row fq qwen3-30b-a3b:Q4_K_M 0
echo "t=$(( $(date +%s)-t0 ))"
