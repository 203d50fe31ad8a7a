#!/bin/bash
# next355 (round 63): the folding producers with two ring stages (BW24_FOLD_STAGES=2), so that a consumer CTA fits
# beside two of theirs and issues its first copies before they end (next354's trace: Q + K +1.9 us, gate-up +2.2 us a
# launch once the norm launch between went); tg128 alternated with the fold at three stages and off; one traced row.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench (wip/fold-out).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold-stages
A="-p 512 -n 128 -r 2"
for i in 1 2; do
  row off new qwen3-8b:Q4_K_M tg128 "$A" BW24_NORM_FOLD=0
  row on3 new qwen3-8b:Q4_K_M tg128 "$A"
  row on2 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_STAGES=2
done
row off new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_NORM_FOLD=0
row on3 new qwen3.5-9b:Q4_K_M tg128 "$A"
row on2 new qwen3.5-9b:Q4_K_M tg128 "$A" BW24_FOLD_STAGES=2
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_POS=0 TRACE_LINES=14 trace_row 8b-fold2 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FOLD_STAGES=2
echo "end t=$(el)"
