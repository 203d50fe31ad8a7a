#!/bin/bash
# next96 (carry .carry only): bash tools/wip/next96.sh SHA  (timeout_s 420)
# new = wip/q6k-chunk SHA: the Q6_K one-matrix streamed launches (attn_v, half the downs, lm_head of Q4_K_M) with
# BW24_Q6K_CHUNK=8 (13.4 KB stages, three CTAs an SM; the 30B's 2048-wide rows fill whole pieces) or
# BW24_Q6K_MIN_STAGES=2 (16-block pieces, two stages, three CTAs an SM), against the default (two CTAs an SM).
# Why: lm_head alone (ncu, dd5e1f0) is 194 us for 510 MB on the 8B (2.6 TB/s) and 155 us for 255 MB on the 30B
# (1.6 TB/s, half-filled 16-block pieces). Prediction: 30B +3-4 %, 8B +1-2 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for v in "BW24_Q6K_CHUNK=8" "BW24_Q6K_MIN_STAGES=2"; do
  env $v timeout 100 ./build-new/bw24-kernel-check gemv_q8_streamed > /tmp/kc.txt 2>&1
  echo "$v kernel-check gemv_q8_streamed rc=$? $(tail -n 1 /tmp/kc.txt)"; grep -E "FAIL|rror" /tmp/kc.txt | head -5
  grep "Q6_K" /tmp/kc.txt | sed "s/^/$v /" >> "$OUT/kc-q6k-$SHA.txt"; done
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M; do
  row def new $m tg128 "$A"; row c8 new $m tg128 "$A" BW24_Q6K_CHUNK=8; row s2 new $m tg128 "$A" BW24_Q6K_MIN_STAGES=2; done; done
for m in qwen3-8b:Q6_K qwen3.5-9b:Q4_K_M; do
  row def new $m tg128 "$A"; row c8 new $m tg128 "$A" BW24_Q6K_CHUNK=8; row s2 new $m tg128 "$A" BW24_Q6K_MIN_STAGES=2; done
echo "end t=$(el)"
