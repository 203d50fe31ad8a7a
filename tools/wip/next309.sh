#!/bin/bash
# next309 (round 55): rmsnorm_q8's chain shorter (branch wip/norm-redux 08d1e9b on wip/q8-rows 0713676): block_inv_rms
# with one barrier, store_act_q8's code sum and the block max by redux.sync. Kernel checks (same bits), then tg128
# rows, q8-rows' bench (base) against the branch's (new), alternated.
SHA=$1
source tools/wip/lib.sh
begin $SHA-norm-redux
kc_one $SHA rmsnorm attention attention_rope gdn moe
for i in 1 2; do for b in base new; do
  row $b $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done; done
for b in base new; do
  row $b-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 0 -d 4096 -n 128 -r 2"
  row $b $b qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done
echo "end t=$(el)"
