#!/bin/bash
# next383 (round 69, after next380): wip/kv-rotate-cuda 5107bed's [gpu-diag] case: a q4_0 cache on tiny-qwen3 Q8_0,
# plain and rotated, GPU against the CPU reference with f32 and with int8-rounded product inputs. next380's rotated q4_0
# row read 0.088 / 0.070 (prefill / decode) against a 0.05 bound, every argmax flip within its error; this says whether
# the plain q4_0 cache reads the same (the 4-bit rounding of K rows that differ by the GEMV's int8 inputs) or rotation
# adds error. Pack: build-pack/rot-5107bed.tar.xz (the GPU-vs-CPU test program and libbw24.so.0 only).
SHA=$1
source tools/wip/lib.sh
begin $SHA-q4diag
timeout 300 ./build-new/tests/bw24_gpu_vs_cpu_tests "*with q4_0 caches*" 2>&1 | grep -E "^(plain|rotated)|FAILED|passed|failed" | cut -c1-200
echo "end t=$(el)"
