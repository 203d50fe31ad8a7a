#!/bin/bash
# next100 (carry .carry only): bash tools/wip/next100.sh SHA  (timeout_s 480)
# new = wip/next-combo SHA (e.g. 883aad4, on main b69d2c9), two prepared changes; base = main b69d2c9's bench.
# 1. Q6_K biased dot (tools/wip/patches/q6k-biased-dot.patch, a1088b7): the streamed Q6_K dot takes the quants
#    unsigned (q in [0, 64)) and applies the -32 to the integer sums (sum q x - 32 sum x: the same integers, the same
#    bits); eight __vsub4 a lane and block (three instructions each on sm_90) become four dp4a and four IMAD; the Q6_K
#    store kernel's static count 2128 -> 2084. The warp-per-row kernel keeps the signed form (SASS = main's).
#    Prediction: Qwen3-8B Q4_K_M +1 %, Qwen3-8B Q6_K +3 %, 30B +0.5 % (new against base, no environment).
# 2. F16 / BF16 streamed GEMV four CTAs an SM (tools/wip/patches/half-4ctas.patch): BW24_HALF_CTAS=4 (SASS = main's;
#    host launch only). Why: ncu of a BF16 down (5bd9f57): 62 us for 100.7 MB, achieved occupancy 36 % of 56 %, 9.7 of
#    16.7 cycles between a warp's instructions on L1 loads (its f32 activations); 512 row groups on 396 slots (116 CTAs
#    of two) become 512 on 528. Prediction: Qwen3-8B BF16 180 -> ~195 (new with the environment against new without).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
check_rows $SHA gemv_q8_streamed 'Q6_K'
BW24_HALF_CTAS=4 timeout 100 ./build-new/bw24-kernel-check gemv_float > /tmp/kc.txt 2>&1
echo "HALF_CTAS=4 kernel-check gemv_float rc=$? $(tail -n 1 /tmp/kc.txt)"; grep -E "FAIL|rror" /tmp/kc.txt | head -5
cat /tmp/kc.txt >> "$OUT/kc-gemv_q8_streamed-$SHA.txt"
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do
  for m in qwen3-8b:Q4_K_M qwen3-8b:Q6_K; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
  row h3 new qwen3-8b:BF16 tg128 "$A"; row h4 new qwen3-8b:BF16 tg128 "$A" BW24_HALF_CTAS=4; done
row base base qwen3-30b-a3b:Q4_K_M tg128 "$A"; row new new qwen3-30b-a3b:Q4_K_M tg128 "$A"
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
[ $(el) -lt 360 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J \
  --json "$OUT/new-$SHA-qwen3-8b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/new /"
echo "end t=$(el)"
