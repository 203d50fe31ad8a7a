#!/usr/bin/env bash
# The test command (README): release build (CUDA compiled for sm_90 when nvcc is present; GPU
# tests skip without a device) + ctest, then the same suite under ASan + UBSan (CPU only).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBW24_CUDA=AUTO -DBW24_CUDA_ARCHS=90
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBW24_SANITIZE=ON -DBW24_CUDA=OFF
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
