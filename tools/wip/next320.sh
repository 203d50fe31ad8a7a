#!/bin/bash
# next320 (prepared in round 57, not run): the merge launch's epilogue and trigger (branch wip/merge-epilogue,
# BW24_MERGE_EXP bits, 0 = main's form in the same binary): 1 divides by L as one reciprocal a head (other bits: the
# kernel check's 1e-5 against lib/ref decides), 2 lets the O projection launch once the CTA's splits are summed
# instead of first (its early copies then leave the partials' L2 round trip alone; round 51's trigger after the wait
# lost 0.6 %). Kernel check attention with EXP=1, then tg128 at depth 4096 alternated. Pack:
#   bash tools/wip/pack-bins.sh new wip/merge-epilogue bw24-bench bw24-kernel-check   (HEAD on the branch, clean tree)
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-epilogue
export BW24_MERGE_EXP=1; kc $SHA attention; unset BW24_MERGE_EXP
for i in 1 2; do for v in 0 1 2 3; do row exp$v new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_EXP=$v; done; done
for v in 0 1 2 3; do row exp$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_MERGE_EXP=$v; done
echo "end t=$(el)"
