#!/bin/bash
# next357 (round 63): the folding producers request their consumer's first weights into L2 after their wait (wip/fold-ahead):
# the O projection the gate-up's (BW24_FOLD_AHEAD=G groups of each gate-up CTA from _FROM=c0, gate and up: DRAM idles
# in O's post-wait window), the down Q + K's (BW24_FOLD_AHEAD_QK=G: Q's rows of the first 320 groups). tg128 alternated.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench (wip/fold-ahead).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold-ahead
A="-p 512 -n 128 -r 2"
for i in 1 2; do
  row base new qwen3-8b:Q4_K_M tg128 "$A"
  row a1 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD=1
  row a2 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD=2
  row a1-all new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD=1 BW24_FOLD_AHEAD_FROM=0
  row qk1 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD_QK=1
  row a1qk1 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD=1 BW24_FOLD_AHEAD_QK=1
done
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
TRACE_POS=0 TRACE_LINES=12 trace_row 8b-a1qk1 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FOLD_AHEAD=1 BW24_FOLD_AHEAD_QK=1
echo "end t=$(el)"
