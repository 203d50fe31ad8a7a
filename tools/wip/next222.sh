#!/bin/bash
# next222 (round 38; carry .carry: bench + GPU tests of main 5dbfaab as build-new, bench of wip/q6k-combine b52d1a4 as
# build-ab): bash tools/wip/next222.sh SHA -- the landing build of the MoE norm fold: GPU model tests and GPU vs CPU,
# the acceptance rows of the MoE shapes; then the Q6_K routed down + combine variants (BW24_COMBINE_Q6K: 0 = main,
# 1 = three CTAs an SM, no spills; 2 = three an SM with the scales and d loaded beside the quants; 3 = four an SM
# with them, more spills).
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
json $SHA 300 qwen3-30b-a3b:Q4_K_M ""
json $SHA 340 qwen3.6-35b-a3b:Q4_K_M ""
for i in 1 2; do for v in 0 1 2 3; do
  row "combine_q6k=$v" ab qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_COMBINE_Q6K=$v; done; done
for v in 0 2; do row "combine_q6k=$v" ab qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_COMBINE_Q6K=$v; done
echo "end t=$(el)"
