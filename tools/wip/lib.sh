# Shared by the device A/B scripts (source tools/wip/lib.sh from the repository root on the device):
# the environment, the stories260K fixture where the tests look for it, configure, timing and a bench row.
export LD_LIBRARY_PATH=$PWD/.deps/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/bw24-out}; mkdir -p "$OUT"; t0=$(date +%s)
el() { echo $(( $(date +%s)-t0 )); }
mkdir -p ../shared/models/reference && cp .carry/stories260K.gguf ../shared/models/ &&
  cp .carry/stories260K_greedy_reference.json ../shared/models/reference/
# cfg SRC BUILD SHA [cmake args...]
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON \
  -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=$3 "${@:4}" > /tmp/cmake-$3.log 2>&1 || { tail -20 /tmp/cmake-$3.log; exit 1; }; }
# row LABEL BUILD SHAPE TEST "BENCH ARGS" [ENV=VALUE...]: the TEST row's tok/s of build-BUILD/bw24-bench
row() { local t=$1 b=$2 m=$3 k=$4 a=$5; shift 5; env "$@" timeout 90 ./build-$b/bw24-bench -m "synthetic:$m" $a --device 0 2>&1 |
  grep -E "$k|rror" | awk -F'|' -v t="$t $m $k" '{print t " | " $7}'; }
# build_ab SHA [TARGETS...]: .carry/main-src's bw24-bench as build-main beside the working tree's bw24-bench and
# TARGETS as build-new (SHA: the candidate's commit, computed where git metadata is current), both at once
build_ab() { cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $1
  ( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
  ( ninja -C build-new -j16 bw24-bench "${@:2}" > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
  wait; echo "built t=$(el)"; }
# kc SHA FAMILY...: build-new's kernel check of each family into $OUT, its last line and any failure
kc() { local sha=$1 f; shift; for f in "$@"; do timeout 120 ./build-new/bw24-kernel-check $f > "$OUT/kc-$f-$sha.txt" 2>&1
  echo "kernel-check $f rc=$? $(tail -n 1 $OUT/kc-$f-$sha.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$sha.txt" | head -12; done; }
# gpu_tests SHA: build-new's [gpu] model tests and GPU-vs-CPU tests into $OUT, their summary lines
gpu_tests() { timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$1.txt" 2>&1
  echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$1.txt" | head -3
  timeout 120 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$1.txt" 2>&1
  echo "GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" "$OUT/gpu-vs-cpu-$1.txt" | head -5; }
