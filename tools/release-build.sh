#!/bin/bash
# The release build's compile check (issue 4, item 9): CUDA for sm_80, sm_90a and sm_120, every target
# built and linked. CI compiles sm_90 only, so an arch slip (sm_90 PTX without a guard, as
# benchmarks/chain_probe.cu had from round 18 to round 67) shows only here.
#
#   bash tools/release-build.sh [BUILD_DIR]        (default: /tmp/bw24-release; ~6 min of 2 cores, no ccache)
#
# Then, where cuobjdump is found (the toolkit's, or PyPI's nvidia-cuda-cuobjdump), counts the ELF images of
# each arch in libbw24_cuda.a: every .cu file should carry one of each. Exit status: the build's, or 1
# where an arch lacks images.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/bw24-release}
archs="80;90;120"
start=$(date +%s)
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBW24_CUDA=ON -DBW24_CUDA_ARCHS="$archs" > /dev/null
cmake --build "$dir"
echo "release build ($archs): every target built and linked in $(( $(date +%s) - start )) s"
lib=$(find "$dir" -name libbw24_cuda.a | head -1)
if ! command -v cuobjdump > /dev/null; then
  echo "cuobjdump not found: ELF images not counted"
  exit 0
fi
n_cu=$(find "$root/cuda" -name '*.cu' | wc -l)
rc=0
for sm in sm_80 sm_90a sm_120; do
  n=$(cuobjdump --list-elf "$lib" | grep -c "\.$sm\.cubin$" || true)
  echo "$sm: $n ELF images for $n_cu .cu files"
  [ "$n" -ge "$n_cu" ] || rc=1
done
exit $rc
