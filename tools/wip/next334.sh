#!/bin/bash
# next334 (round 60): wip/split-three (8d8c257): BW24_SPLIT_ONE_THREE=0/1 alternated in one binary, so that two O
# projection CTAs fit beside a split CTA at depth 0. The 30B and 8B at depth 0 (-p 512 -n 128 -r 2) and 4096, the 9B.
# Pack: git checkout wip/split-three && bash tools/wip/pack-bins.sh split3 HEAD bw24-bench && git checkout main.
SHA=$1
source tools/wip/lib.sh
begin $SHA-split3
for i in 1 2; do for v in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M; do
  row s3=$v split3 $m tg128 "-p 512 -n 128 -r 2" BW24_SPLIT_ONE_THREE=$v; done; done; done
for v in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:Q4_K_M; do
  row d4096-s3=$v split3 $m tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_SPLIT_ONE_THREE=$v; done; done
for v in 0 1; do row s3=$v split3 qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SPLIT_ONE_THREE=$v; done
echo "end t=$(el)"
