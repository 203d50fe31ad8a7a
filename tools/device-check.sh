#!/bin/bash
# The H200 acceptance run (through the device tool): configure, build, bw24-kernel-check, the GPU
# tests, stories260K, then bw24-bench rows. Run from the repo root on the device machine with
# .deps (STAGE_EXTRA="libutf8proc-dev libutf8proc2" ../shared/tools/stage-deps.sh .deps: the script's
# list lacks utf8proc, which the tokenizer needs) and .carry/ (stories260K.gguf and its
# reference json from ../shared/models) carried; the build there is cold (~60-70 s: a compiler
# cache filled here got 0 of 190 hits on the H200, so none is carried); results land in $OUT.
# Bench depths: $DEPTHS (default 0,4096), default (f16) KV.
#   bash tools/device-check.sh SHA [QUANT | SHAPE:QUANT ...]
#   e.g.  bash tools/device-check.sh abc1234 Q4_K_M Q8_0 qwen3-30b-a3b:Q4_K_M      (NO_MICRO=1: skip the
#   microbenchmarks; REPS, DEPTHS: bench repetitions and depths)
SHA=${1:?commit}; shift
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"
mkdir -p ../shared/models/reference && cp .carry/stories260K.gguf ../shared/models/ &&
  cp .carry/stories260K_greedy_reference.json ../shared/models/reference/
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON \
  -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA="$SHA" > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
/usr/bin/time -f "build %e s" ninja -C build-h200 -j16 > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -60; exit 1; }
tail -1 "$OUT/build.log"; rm -f "$OUT/build.log" "$OUT/cmake.log"  # the device tool returns a few files only
./build-h200/bw24-kernel-check > "$OUT/kernel-check.txt" 2>&1; echo "kernel-check rc=$?"; grep -E "FAIL|passed" "$OUT/kernel-check.txt" | head -40
./build-h200/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu_vs_cpu.txt" 2>&1; echo "gpu_vs_cpu rc=$?"
grep -E "gpu vs cpu|FAILED|passed|failed" "$OUT/gpu_vs_cpu.txt" | head -40
./build-h200/tests/bw24_model_tests "[gpu]" > "$OUT/gpu_goldens.txt" 2>&1; echo "gpu_goldens rc=$?"
grep -E "gpu golden|FAILED|passed|failed" "$OUT/gpu_goldens.txt" | head -20
./build-h200/tests/bw24_model_tests "[stories260K]" 2>&1 | tail -2
[ -n "$NO_MICRO" ] || { ./build-h200/bw24-microbench --benchmark_min_time=0.1s > "$OUT/microbench.txt" 2>&1; echo "microbench rc=$?"; }
for q in "$@"; do  # QUANT (the qwen3-8b shape) or SHAPE:QUANT
  m=$q; [[ $m == *:* ]] || m="qwen3-8b:$q"
  ./build-h200/bw24-bench -m "synthetic:$m" -p 512 -n 128 -d ${DEPTHS:-0,4096} -r ${REPS:-2} --device 0 \
    --json "$OUT/bench-${m/:/-}.json" 2>&1 | grep -v "^loaded" | tail -4
done
