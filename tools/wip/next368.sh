#!/bin/bash
# next368 (round 64): the stream GEMV's consumers release a stage before the row's epilogue (wip/fold-pair HEAD)
# against the folded consumers' 1 / rms once a warp (8ad1021's device code; packed as base from f822861's build,
# whose cluster-policy knob is off by default). Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests.
SHA=$1
source tools/wip/lib.sh
begin $SHA-release
kc $SHA gemv_q8_streamed gemv_q8_norm_fold gemv_q8_gate_up_q8
for i in 1 2; do
  row base base qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row new new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3-8b:Q8_0; do
  row base base $m tg128 "-p 512 -n 128 -r 2"; row new new $m tg128 "-p 512 -n 128 -r 2"; done
row base-d4096 base qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row new-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
gpu_tests $SHA
echo "end t=$(el)"
