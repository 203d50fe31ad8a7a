#!/bin/bash
# next103 (carry .carry only): bash tools/wip/next103.sh SHA  (timeout 480)
# new = main SHA (a0edfcf: the int8 streamed formats load a piece's staged activations before the stage's wait, Q4_K /
# Q5_K both warp steps (40 registers), Q6_K all four (48); no spills, 60-72 registers), packed from its clean HEAD;
# base = 155b7c3's bench (F16 / BF16 only ahead).
# Prediction: Qwen3-8B Q4_K_M +1-2 %, Q6_K +2 % (shared-memory loads are ~25 cycles against L1's ~35, a smaller wait
# than BF16's +6.5 %).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float
check_rows $SHA gemv_q8_streamed 'Q6_K'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q6_K qwen3-30b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
js() { local m=$1 tag=$2; shift 2; [ $(el) -lt 390 ] && timeout 60 ./build-new/bw24-bench -m synthetic:$m $J "$@" \
  --json "$OUT/$SHA-${m/:/-}$tag-h200.json" | grep -E "tg128" | sed "s/^/$m$tag /"; }
js qwen3-8b:Q4_K_M ""; js qwen3-30b-a3b:Q4_K_M ""; js qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0; js qwen3.5-9b:Q4_K_M ""
js qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
