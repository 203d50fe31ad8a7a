#!/bin/bash
# next352 (round 62): the MoE shared expert's gate-up writing the shared down's int8 input (branch wip/shared-q8:
# CudaRunner::gate_up_q8 / down_input for the dense FFN and the shared expert alike; BW24_GATEUP_Q8=0 off). The GPU
# tests, then the 35B (the only Qwen shape with a shared expert) alternated 0 / 1, the 8B once. Pack: bash
# tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (on wip/shared-q8).
SHA=$1
source tools/wip/lib.sh
begin $SHA-shared
gpu_tests $SHA
A="-p 512 -n 128 -r 2"
for i in 1 2; do for v in 0 1; do row gq8=$v new qwen3.6-35b-a3b:Q4_K_M tg128 "$A" BW24_GATEUP_Q8=$v; done; done
row gq8=1 new qwen3-8b:Q4_K_M tg128 "$A"
echo "end t=$(el)"
