#!/bin/bash
# next4b (run from main; carry .deps .carry): wip/q6k-chunk8 A/B and the wip/scratch-sweep pp512 sweep (~5 min); ncu: next4c.sh
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
cmake -S . -B build-main -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$SHA -DBW24_TESTS=OFF > /tmp/cmake.log 2>&1 || exit 1
cmake -S .carry/q6k8-src -B build-q6 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=q6k8 -DBW24_TESTS=OFF > /tmp/cmake-q6.log 2>&1 || exit 1
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-q6 -j16 bw24-bench bw24-kernel-check > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
ln -sfn $PWD/tests/data .carry/dnmulti-src/tests/data   # the same test data as main
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
cmake -S .carry/dnmulti-src -B build-dn -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=dnmulti > /tmp/cmake-dn.log 2>&1 || exit 1
( ninja -C build-dn -j16 bw24-bench bw24_model_tests > /tmp/b4.log 2>&1 || grep -A3 error /tmp/b4.log | head -30 ) &
cmake -S .carry/scratch-src -B build-sc -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=scratch -DBW24_TESTS=OFF > /tmp/cmake-sc.log 2>&1 || exit 1
( ninja -C build-sc -j16 bw24-bench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
# wip/q6k-chunk8 (.carry/q6k8-src): Q6_K streamed in chunks of 8 blocks
timeout 60 ./build-q6/bw24-kernel-check gemv_q8_streamed > "$OUT/kc-q6k8.txt" 2>&1; echo "q6k8 kernel-check gemv_q8_streamed rc=$? $(tail -n 1 $OUT/kc-q6k8.txt)"
row() { local b=$1 m=$2; ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m" '{print t " | " $7}'; }
for r in 1 2; do row main qwen3-8b:Q6_K; row q6 qwen3-8b:Q6_K; done
row main qwen3-8b:Q4_K_M; row q6 qwen3-8b:Q4_K_M
echo "t=$(( $(date +%s)-t0 ))"
# wip/scratch-sweep (.carry/scratch-src): pp512 with the bf16 expansion scratch capped (256 MB by default), so a slice may stay in L2
ppr() { env "$@" ./build-sc/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 0 -d 0 -r 3 --device 0 2>&1 | grep -E "pp512|rror" | awk -F'|' -v t="scratch $*" '{print t " | " $7}'; }
ppr; for mb in 64 32 24 16; do ppr BW24_GEMM_SCRATCH_MB=$mb; done
echo "t=$(( $(date +%s)-t0 ))"
# wip/dn-multi (.carry/dnmulti-src): the delta-net input products in multi-matrix launches
(cd .carry/dnmulti-src && timeout 90 ../../build-dn/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-dnmulti.txt" 2>&1; echo "dnmulti GPU tests rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-dnmulti.txt" | head -3
for r in 1 2; do row main qwen3.5-9b:Q4_K_M; row dn qwen3.5-9b:Q4_K_M; done
echo "t=$(( $(date +%s)-t0 ))"
# Acceptance JSON of main (benchmarks/results/, one file per run named by date and commit)
timeout 90 ./build-main/bw24-bench -m synthetic:qwen3.5-9b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$SHA-qwen3.5-9b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
timeout 90 ./build-main/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$SHA-qwen3-30b-a3b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "t=$(( $(date +%s)-t0 ))"
