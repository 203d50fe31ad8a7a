#!/bin/bash
# next95 (carry .carry only): bash tools/wip/next95.sh SHA  (timeout_s 420)
# new = wip/gate-up-q8 SHA (9c3828c): the one-token streamed gate-up also writes its output as the down projection's int8
# blocks (cuda::gemv_q8_gate_up_q8; CTAs take whole blocks of 32 outputs, warp 0 quantizes each with store_act_q8), so
# the rmsnorm_q8 launch between gate-up and down, and its boundary, go away. A/B in one binary: BW24_GATE_UP_Q8=0.
# Prediction: ~1.2 us a layer (round 15's norm ablation, a third of it): Qwen3-8B Q4_K_M 456 -> ~465 (+2 %).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed rmsnorm_q8
check_rows $SHA gemv_q8_streamed 'gate-up q8'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do row off new qwen3-8b:Q4_K_M tg128 "$A" BW24_GATE_UP_Q8=0; row on new qwen3-8b:Q4_K_M tg128 "$A"; done
row base base qwen3-8b:Q4_K_M tg128 "$A"
for m in qwen3.5-9b:Q4_K_M qwen3-8b:Q5_K_M; do row off new $m tg128 "$A" BW24_GATE_UP_Q8=0; row on new $m tg128 "$A"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
[ $(el) -lt 300 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J \
  --json "$OUT/new-$SHA-qwen3-8b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/new /"
[ $(el) -lt 330 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J --kv q8_0 \
  --json "$OUT/new-$SHA-qwen3-8b-Q4_K_M-kv-q8_0-h200.json" | grep tg128 | sed "s/^/new /"
echo "end t=$(el)"
