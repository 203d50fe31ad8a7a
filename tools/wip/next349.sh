#!/bin/bash
# next349 (round 62): the one-token gate-up writing the down's int8 input itself (branch wip/gate-up-q8b:
# runs of four row groups a CTA, warp 0 quantizes each block of 32 rows; BW24_GATEUP_Q8=0 the plain gate-up and the
# int8 launch). Kernel check gemv_q8_gate_up_q8 (bit-equal to gate-up + rmsnorm_q8) and gemv_q8_streamed, the GPU
# tests, then tg128 alternated 0 / 1: the 8B (three rounds), the 9B, the 30B (no dense FFN: unchanged), the 8B at
# depth 4096 and with q8_0 KV; the 8B traced with it. Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench \
#   bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests (on wip/gate-up-q8b).
SHA=$1
source tools/wip/lib.sh
begin $SHA-gq8
kc $SHA gemv_q8_gate_up_q8; grep "gemv_q8_gate_up_q8 " $OUT/kc-gemv_q8_gate_up_q8-$SHA.txt | head -6
kc $SHA gemv_q8_streamed
gpu_tests $SHA
A="-p 512 -n 128 -r 2"
for i in 1 2 3; do for v in 0 1; do row gq8=$v new qwen3-8b:Q4_K_M tg128 "$A" BW24_GATEUP_Q8=$v; done; done
for v in 0 1; do row gq8=$v new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_GATEUP_Q8=$v; done
for v in 0 1; do row gq8=$v-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_GATEUP_Q8=$v; done
for v in 0 1; do row gq8=$v-q8kv new qwen3-8b:Q4_K_M tg128 "$A --kv q8_0" BW24_GATEUP_Q8=$v; done
row gq8=1 new qwen3-30b-a3b:Q4_K_M tg128 "$A"
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
[ $(el) -lt 360 ] && TRACE_POS=12 TRACE_LAYER_ROWS=48 TRACE_LINES=14 trace_row 8b-gq8-1 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_GATEUP_Q8=1
echo "end t=$(el)"
