#!/bin/bash
# next100 (carry .carry only): bash tools/wip/next100.sh SHA  (timeout_s 420)
# new = wip/q6k-sum SHA (a1088b7, on main b69d2c9; tools/wip/patches/q6k-biased-dot.patch): the streamed Q6_K dot
# takes the quants unsigned (q in [0, 64)) and applies the -32 to the integer sums (sum q x - 32 sum x, the same
# integers, so the same bits): the eight __vsub4 a lane and block (three instructions each on sm_90) become four
# dp4a and four IMAD; static count of the Q6_K store kernel 2128 -> 2084. The warp-per-row kernel keeps the signed
# form (up to 8 tokens a weight): its SASS equals main's. base = main b69d2c9's bench.
# Why: lm_head alone streams at 2.6 TB/s (8B, 510 MB in 194 us) with its consumers latency-bound (two CTAs an SM);
# Q6_K is 27 % of a Qwen3-8B Q4_K_M step's bytes (lm_head, 17 downs and attn_v). Prediction: +1 % (8B Q4_K_M),
# +3 % (8B Q6_K model), 30B +0.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
check_rows $SHA gemv_q8_streamed 'Q6_K'
[ $(el) -lt 100 ] && kc $SHA gemv_q8
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q6_K; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
for m in qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
[ $(el) -lt 330 ] && timeout 40 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J \
  --json "$OUT/new-$SHA-qwen3-8b-Q4_K_M-h200.json" | grep tg128 | sed "s/^/new /"
echo "end t=$(el)"
