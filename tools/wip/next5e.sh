#!/bin/bash
# next5e: main vs exp-g (moe_gate alone), Qwen3-30B-A3B tg128.
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu; t0=$(date +%s)
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 -DBW24_TESTS=OFF > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main main; cfg .carry/g-src build-g g
( ninja -C build-main -j8 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head ) &
( ninja -C build-g -j8 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
row() { local b=$1 m=$2; timeout 45 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m" '{print t " | " $7}'; echo "t=$(( $(date +%s)-t0 ))"; }
row g qwen3-30b-a3b:Q4_K_M; row main qwen3-30b-a3b:Q4_K_M; row g qwen3-30b-a3b:Q4_K_M; row main qwen3-30b-a3b:Q4_K_M; row g qwen3.6-35b-a3b:Q4_K_M
