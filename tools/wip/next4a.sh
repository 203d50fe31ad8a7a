#!/bin/bash
# Session after 2026-11-30 (run from main; carry .deps .carry):   bash .carry/next4a.sh $(git rev-parse --short HEAD)   (~8 min)
# next4a: wip/hybrid (.carry/hybrid-src: flash decode merges of > 32 splits by a merge kernel) and wip/moe-fuse
# (.carry/moefuse-src: routing and down quantization folded into the routed GEMVs) beside main, kernel checks and A/B rows.
# next4b.sh: per-kernel ncu durations of one decode token (30B-A3B, 9B).
SHA=$1
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
for s in ../shared .carry/shared; do mkdir -p $s/models/reference && cp .carry/stories260K.gguf $s/models/ && cp .carry/stories260K_greedy_reference.json $s/models/reference/; done
ln -sfn $PWD/tests/data .carry/moefuse-src/tests/data   # the same test data as main (not carried twice)
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 $4 > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
cfg . build-main $SHA -DBW24_TESTS=OFF; cfg .carry/hybrid-src build-hy hybrid -DBW24_TESTS=OFF; cfg .carry/moefuse-src build-mf moefuse
( ninja -C build-main -j16 bw24-bench bw24-microbench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-hy -j16 bw24-bench bw24-microbench bw24-kernel-check > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-mf -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(( $(date +%s)-t0 ))"
timeout 60 ./build-hy/bw24-kernel-check attention > "$OUT/kc-attention-hybrid.txt" 2>&1; echo "hybrid kernel-check attention rc=$? $(tail -n 1 $OUT/kc-attention-hybrid.txt)"
timeout 120 ./build-mf/bw24-kernel-check moe > "$OUT/kc-moe-moefuse.txt" 2>&1; echo "moefuse kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-moefuse.txt)"; grep -E "FAIL|folds" "$OUT/kc-moe-moefuse.txt" | head -12
(cd .carry/moefuse-src && timeout 90 ../../build-mf/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-moefuse.txt" 2>&1; echo "moefuse GPU tests rc=$?"); grep -E "FAILED|passed|failed" "$OUT/gpu-tests-moefuse.txt" | head -3
timeout 120 ./build-mf/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-moefuse.txt" 2>&1; echo "moefuse GPU vs CPU rc=$?"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-moefuse.txt" | head -3
for b in main hy; do timeout 40 ./build-$b/bw24-microbench --benchmark_filter='flash_decode/(128|4096|32768)/1/' 2>&1 | grep -E "^flash" | awk -v b=$b '{print b, $1, $2, $3}'; done
row() { local b=$1 m=$2 d=$3; shift 3; env "$@" ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d $d -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$b $m d$d $*" '{print t " | " $7}'; }
row main qwen3-8b:Q4_K_M 4096; row hy qwen3-8b:Q4_K_M 4096
echo "t=$(( $(date +%s)-t0 ))"
for r in 1 2; do row main qwen3-30b-a3b:Q4_K_M 0; row mf qwen3-30b-a3b:Q4_K_M 0; done
row mf qwen3-30b-a3b:Q4_K_M 0 BW24_MOE_FOLD=none   # route / quant alone: BW24_MOE_FOLD=route|quant
row main qwen3.6-35b-a3b:Q4_K_M 0; row mf qwen3.6-35b-a3b:Q4_K_M 0
echo "t=$(( $(date +%s)-t0 ))"
# Acceptance JSON of main (benchmarks/results/, one file per run named by date and commit)
timeout 90 ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$(date +%F)-$SHA-qwen3-8b-Q4_K_M-h200.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "t=$(( $(date +%s)-t0 ))"
