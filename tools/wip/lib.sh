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
