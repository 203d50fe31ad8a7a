#!/bin/bash
# next313 (round 56): the merge kernel with each warp merging its own splits under its own running max and the eight
# warps' (m, l) meeting after the barrier, so no (M, L) butterfly sits between the partials' L2 round trip and the sums
# (branch wip/merge-local; BW24_MERGE_LOCAL=0 in the same binary is main's form). Kernel checks with it on, then tg128
# at depth 4096 (positions 4,097-4,224: 33 visible splits, the merge launch), alternated off / on.
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-local
export BW24_MERGE_LOCAL=1
kc_one $SHA attention attention_rope attention_bound
unset BW24_MERGE_LOCAL
for i in 1 2; do for w in 0 1; do
  row local$w new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_LOCAL=$w
done; done
for w in 0 1; do
  row local$w-q8 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_MERGE_LOCAL=$w
done
for w in 0 1; do
  row local$w new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_LOCAL=$w
done
echo "end t=$(el)"
