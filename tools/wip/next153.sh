#!/bin/bash
# next153 (carry .carry only): bash tools/wip/next153.sh SHA  (timeout 520) -- round 27: Q4_K / Q5_K rows of more than
# 32 blocks streamed in pieces of 24 blocks (branch wip/long-rows; the K = 12,288 downs: 2 x 2 items a CTA, not 2 x 3).
# main = 879ef01's bench (same GEMV code as main 514c588). Pack: new = the branch's bw24-bench and bw24-kernel-check.
# Expect: kernel check gemv_q8_streamed all ok (incl. the new 40 x 17408 rows); prediction: the Q4_K downs 10.1 ->
# ~7.5 us, Qwen3-8B Q4_K_M tg128 +1-2.5 %, Qwen3.5-9B +1-2 %, Qwen3.5-27B (K = 17,408: 5 -> 3 pieces a row) more.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  [ $(el) -lt 230 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do [ $(el) -lt 270 ] && row $b $b qwen3.5-27b:Q4_K_M tg64 "-p 16 -n 64 -r 2"; done
kc $SHA gemv_q8_streamed
echo "end t=$(el)"
