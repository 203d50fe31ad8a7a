#!/bin/bash
# Warm compiler cache for the H200 runs (the device tool starts a bare machine: a cold build is
# ~75 s of the session's 30 device minutes). Here, on the development machine (same nvcc, same
# Debian): put ccache and its libraries into .deps (which the device run carries), then build the
# device-check targets in build-h200 with the device's configuration into the cache .ccache-h200
# (carry it too; ~ tens of MB compressed). tools/device-check.sh uses it when present. Paths are
# made relative (CCACHE_BASEDIR) and nvcc is hashed by content, so the device's checkout path and
# file times do not matter; a commit define (BW24_GIT_SHA) misses only the file that reads it.
#   bash tools/device-cache.sh            (then carry .deps, .ccache-h200, .carry)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .deps/usr ] || { echo "stage .deps first (../shared/tools/stage-deps.sh .deps)" >&2; exit 1; }
cc=$(command -v ccache) || { echo "ccache not installed here (apt-get install ccache)" >&2; exit 1; }
mkdir -p .deps/usr/bin .deps/usr/lib/x86_64-linux-gnu
cp -f "$cc" .deps/usr/bin/ccache
for lib in $(ldd "$cc" | awk '/=>/ {print $3}'); do  # what a bare CUDA image may lack
  case $(basename "$lib") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libzstd*) ;; *) cp -fL "$lib" .deps/usr/lib/x86_64-linux-gnu/ ;; esac
done
source tools/ccache-env.sh
rm -rf "$CCACHE_DIR" build-h200
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DBW24_CUDA=ON \
  -DBW24_CUDA_ARCHS=90 -DBW24_GIT_SHA=cache > /dev/null
ninja -C build-h200 -j "$(nproc)" > /dev/null
ccache -s | grep -E "Hits|Misses|Cache size" || true
du -sh "$CCACHE_DIR"
