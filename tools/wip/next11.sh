#!/bin/bash
# next11 (run from branch wip/l2-next; carry .deps .carry):  bash .carry/next11.sh <sha>  (< 10 min)
# L2 prefetch of the next launch's weights (BW24_L2_NEXT) and of a streamed CTA's own share (BW24_L2_OWN)
# beside main (.carry/main-src): kernel checks and GPU tests with both on, then A/B rows by environment.
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
export BW24_L2_OWN=1
for f in moe gemv_q8_streamed; do timeout 100 ./build-new/bw24-kernel-check $f > "$OUT/kc-$f-$SHA.txt" 2>&1; echo "kernel-check $f (own) rc=$? $(tail -n 1 $OUT/kc-$f-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$SHA.txt" | head -8; done
timeout 90 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests (own, all) rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 100 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU (own, all) rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-$SHA.txt" | head -3
unset BW24_L2_OWN
row() { local t=$1 b=$2 m=$3; shift 3; env "$@" timeout 60 ./build-$b/bw24-bench -m "synthetic:$m" -p 16 -n 128 -d 0 -r 1 --device 0 2>&1 | grep -E "tg128|rror" | awk -F'|' -v t="$t $m" '{print t " | " $7}'; }
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row main main $m; row none new $m BW24_L2_NEXT=none; row next new $m; row own new $m BW24_L2_OWN=1 BW24_L2_NEXT=none; row own+next new $m BW24_L2_OWN=1
  echo "t=$(el)"; [ $(el) -lt 480 ] || break
done
[ $(el) -lt 520 ] && { row main main qwen3.5-9b:Q4_K_M; row own+next new qwen3.5-9b:Q4_K_M BW24_L2_OWN=1; }
echo "end t=$(el)"
