#!/bin/bash
# next102 (carry .carry only): bash tools/wip/next102.sh SHA  (timeout 420)
# new = main SHA (155b7c3: F16 / BF16 streamed GEMV loads a piece's f32 activations before the stage's wait; 56
# registers in the store / add instances, 48 in gate-up; the int8 instances' SASS unchanged), packed from its clean
# HEAD; base = 7960288's bench (four CTAs an SM, activations after the wait).
# Prediction: Qwen3-8B BF16 tg128 204 -> ~212 (the L1 wait, 9.7 of 16.7 cycles a warp instruction, overlapped).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_float gemv_float_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:BF16 qwen3-8b:F16; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
row base base qwen3-8b:Q4_K_M tg128 "$A"; row new new qwen3-8b:Q4_K_M tg128 "$A"
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
[ $(el) -lt 330 ] && timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:BF16 $J \
  --json "$OUT/$SHA-qwen3-8b-BF16-h200.json" | grep -E "tg128|pp512"
echo "end t=$(el)"
