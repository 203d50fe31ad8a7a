#!/bin/bash
# next101 (carry .carry only): bash tools/wip/next101.sh SHA  (timeout 560)
# new = main SHA (7960288: Q6_K biased dot, F16 / BF16 four CTAs an SM), packed from its clean HEAD; h5 = wip/half5
# (F16 / BF16 compiled for five CTAs an SM, 40 registers; BW24_HALF_CTAS / BW24_HALF_STAGES pick the grid and ring).
# 1. verify the landed build: kernel check (gemv_float at four CTAs, the streamed int8 families), GPU tests;
# 2. BF16 rows: new (4 CTAs, 48/45 registers, 3 stages) against h5 at 4 (40 registers), 5 x 2 stages, 4 x 2 stages.
#    Prediction: five CTAs of two stages +3 % over four of three (occupancy 45 of 64 warps), if two stages hold;
# 3. the acceptance JSON of every row with Q6_K or BF16 weights.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_float gemv_q8_streamed gemv_q8_multi
[ -x ./build-h5/bw24-kernel-check ] && BW24_HALF_CTAS=5 BW24_HALF_STAGES=2 timeout 100 ./build-h5/bw24-kernel-check gemv_float > /tmp/kc.txt 2>&1
echo "h5 5x2 kernel-check gemv_float rc=$? $(tail -n 1 /tmp/kc.txt)"; grep -E "FAIL|rror" /tmp/kc.txt | head -5
cat /tmp/kc.txt >> "$OUT/kc-gemv_float-$SHA.txt"
gpu_tests $SHA
A="-p 16 -n 128 -r 3"; M=qwen3-8b:BF16
for i in 1 2; do
  row new new $M tg128 "$A"; row h5-4x3 h5 $M tg128 "$A"
  row h5-5x2 h5 $M tg128 "$A" BW24_HALF_CTAS=5 BW24_HALF_STAGES=2; row h5-4x2 h5 $M tg128 "$A" BW24_HALF_STAGES=2; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
js() { local m=$1 tag=$2; shift 2; [ $(el) -lt 500 ] && timeout 60 ./build-new/bw24-bench -m synthetic:$m $J "$@" \
  --json "$OUT/$SHA-${m/:/-}$tag-h200.json" | grep -E "tg128|pp512" | sed "s/^/$m$tag /"; }
js qwen3-8b:Q4_K_M ""; js qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0; js qwen3-8b:BF16 ""
js qwen3-30b-a3b:Q4_K_M ""; js qwen3.6-35b-a3b:Q4_K_M ""; js qwen3.5-9b:Q4_K_M ""; js qwen3-8b:Q6_K ""
echo "end t=$(el)"
