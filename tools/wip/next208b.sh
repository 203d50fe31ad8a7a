#!/bin/bash
# next208b (round 35): next208.sh's rows without the GPU tests, one round and two repeats (the session's last
# device seconds). bash tools/wip/next208b.sh SHA (timeout 150)
SHA=$1
source tools/wip/lib.sh
begin $SHA
for c in "0 1 0" "16 1 0" "16 1 1" "32 1 1" "16 0 1" "0 1 0" "16 1 1"; do set -- $c
  row "side=$1 at=$2 kind=$3" new qwen3-8b:Q4_K_M tg128 "-p 16 -r 3" BW24_FFN_SIDE=$1 BW24_FFN_SIDE_AT=$2 BW24_FFN_SIDE_KIND=$3
done
echo "end t=$(el)"
