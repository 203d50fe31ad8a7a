#!/bin/bash
# next112 (carry .carry only): bash tools/wip/next112.sh SHA  (timeout 560)
# new = land/act-once SHA (wip/act-once's two kernel changes on main b600a5d, no hook), packed from its clean HEAD; base = main's bench (pack both first: tools/wip/pack-bins.sh).
# One change: the int8 activation staging (every CTA of every streamed launch, and of the warp-per-row kernels'
# stage_act: the MoE routed launches, between the PDL wait and the first sum) loads a thread's int8 quads and
# (d, d sum q) pairs in one L2 round trip instead of two (the pairs' loop ran after the quads' stores). Sums
# unchanged (same bits). Prediction: ~0.4 us a launch, ~145 streamed int8 launches a Qwen3-8B Q4_K_M token: 2.15 ->
# ~2.09 ms, +2-3 %; Q8_0 alike; Qwen3-30B-A3B +2-4 % (its routed launches too); BF16 unchanged (no staging).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_q8
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3.5-9b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
for m in qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q8_0; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
echo "t=$(el)"
json $SHA 460 qwen3-8b:Q4_K_M ""; json $SHA 520 qwen3.5-9b:Q8_0 ""
echo "end t=$(el)"
