#!/bin/bash
# next323 (round 58): branch wip/merge-narrow's BW24_MERGE_NARROW (1: the D = 128 merge in 128 threads at 62
# registers, resident beside two split CTAs; 0: main's merge_kernel) in one binary: kernel check attention and the GPU
# tests with it on, tg128 at depth 4096 alternated (the acceptance command's n_ctx), depth 0 once, and the 8B traced
# with it on. Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
# tests/bw24_gpu_vs_cpu_tests (HEAD on the branch), trace--* as next319.
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-narrow
export BW24_MERGE_NARROW=1; kc $SHA attention; gpu_tests $SHA; unset BW24_MERGE_NARROW
A="-p 512 -n 128 -d 4096 -r 2"
for i in 1 2; do for v in 0 1; do row n$v new qwen3-8b:Q4_K_M tg128 "$A" BW24_MERGE_NARROW=$v; done; done
for v in 0 1; do row n$v-q8 new qwen3-8b:Q4_K_M tg128 "$A --kv q8_0" BW24_MERGE_NARROW=$v; done
for i in 1 2; do for v in 0 1; do row n$v new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_MERGE_NARROW=$v; done; done
for v in 0 1; do row n$v-d0 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_MERGE_NARROW=$v; done
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_LAYER_ROWS=12 TRACE_POS=8 trace_row 8b-narrow qwen3-8b:Q4_K_M "-p 512 -n 128 -d 4096 -r 1" BW24_MERGE_NARROW=1
echo "end t=$(el)"
