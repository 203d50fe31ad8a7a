#!/bin/bash
# next358 (round 63): how much of Q the down should request into L2 for the Q + K launch after it (next357: Q's first
# 2,560 rows, +0.5 %): 128, 320 and 512 groups of Q (BW24_FOLD_AHEAD_QK_CTAS), alternated twice.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench (wip/fold-ahead, 8f77d2d).
SHA=$1
source tools/wip/lib.sh
begin $SHA-fold-ahead-qk
A="-p 512 -n 128 -r 2"
for i in 1 2; do
  row base new qwen3-8b:Q4_K_M tg128 "$A"
  row qk128 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD_QK=1 BW24_FOLD_AHEAD_QK_CTAS=128
  row qk320 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD_QK=1
  row qk512 new qwen3-8b:Q4_K_M tg128 "$A" BW24_FOLD_AHEAD_QK=1 BW24_FOLD_AHEAD_QK_CTAS=512
done
row base-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row qk320-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FOLD_AHEAD_QK=1
echo "end t=$(el)"
