#!/bin/bash
# next298 (round 54): flash decode's softmax phase and value loads (wip/fd-exp 420f87d, BW24_FD_EXP in one binary):
# 1 = the softmax phase and its two barriers left out (garbage tokens, timing only: the ceiling of a per-warp softmax),
# 2 = the history values loaded right after the PDL wait (same bits), 4 = before it (same bits).
# Pack: tools/wip/pack-bins.sh new HEAD bw24-bench.
SHA=$1
source tools/wip/lib.sh
begin $SHA-fd-exp
for x in 0 1 2 4 0; do row exp$x new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FD_EXP=$x; done
for x in 0 1 2 4 0; do row exp$x new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FD_EXP=$x; done
for x in 0 2 4; do row exp$x-d4096 new qwen3-8b:Q4_K_M tg128 "-p 0 -n 128 -d 4096 -r 2" BW24_FD_EXP=$x; done
echo "end t=$(el)"
