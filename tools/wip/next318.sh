#!/bin/bash
# next318 (round 57): the merge kernel a CTA per (head, 32-dim block) (branch wip/merge-blocks, BW24_MERGE_BLOCKS=0:
# main's CTA a head, the same binary): kernel check attention with it and without (the error columns must match: the
# same bits), then tg128 at depth 4096 alternated. Pack: bash tools/wip/pack-bins.sh new wip/merge-blocks bw24-bench
# bw24-kernel-check (HEAD on the branch, clean tree).
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-blocks
kc $SHA attention
BW24_MERGE_BLOCKS=0 timeout 200 ./build-new/bw24-kernel-check attention > /tmp/kc-off.txt 2>&1
echo "kernel check attention, whole heads: $(tail -n 1 /tmp/kc-off.txt); rows differing from the block form: $(diff /tmp/kc-off.txt $OUT/kc-attention-$SHA.txt | grep -c '^>')"
for i in 1 2; do for v in 0 1; do row blocks$v new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_BLOCKS=$v; done; done
for v in 0 1; do row blocks$v-q8 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_MERGE_BLOCKS=$v; done
for v in 0 1; do row blocks$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_BLOCKS=$v; done
echo "end t=$(el)"
