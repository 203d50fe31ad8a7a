#!/bin/bash
# next228 (carry .carry: bench, kernel check and the GPU tests of main 70fc1d6): bash tools/wip/next228.sh SHA -- the
# landing build of the combine's weights by cp.async (Q6_K rows of up to 4 blocks, Q4_K of up to 2): the moe kernel
# check, the GPU tests, one binary A/B (BW24_COMBINE_ASYNC=0 = the register loads) and the acceptance rows.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
grep "moe down + combine" $OUT/kc-moe-$SHA.txt | grep -c "cp.async"
gpu_tests $SHA
for i in 1 2; do for s in 0 1; do
  row "combine_async=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_ASYNC=$s
  row "combine_async=$s" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_ASYNC=$s; done; done
json $SHA 500 qwen3-30b-a3b:Q4_K_M ""
json $SHA 540 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
