#!/bin/bash
# next325 (round 58): branch wip/stream-cap2's BW24_STREAM_CAP2 (the residual-add stream launches ask for 76 KB, so
# at most two CTAs an SM: on Qwen3-30B-A3B the O projection, whose third CTA on an SM left no room for the cluster
# router's 64 KB CTA before the O projection ended: the router's lead is 0.5 us) in one binary, tg128 alternated.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench (HEAD on the branch).
SHA=$1
source tools/wip/lib.sh
begin $SHA-stream-cap2
for i in 1 2; do for v in 0 1; do row cap$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_STREAM_CAP2=$v; done; done
for v in 0 1; do row cap$v new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_STREAM_CAP2=$v; done
echo "end t=$(el)"
