#!/bin/bash
# next227 (carry .carry: bench + kernel check of wip/both f0fc17d = wip/combine-async 77478bb (the combine's weights by
# cp.async, the shared-memory limit fixed after next226's kernel check refused the wider rows; BW24_COMBINE_ASYNC 0 off,
# 1 Q4_K and Q6_K, 2 Q6_K only) + wip/router-side (BW24_ROUTER_SIDE=1: each MoE layer's router weights into L2 from a
# side stream of the decode graph, forked before (BW24_FFN_SIDE_AT=0) or after (=1) the QKV product)):
# bash tools/wip/next227.sh SHA
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
grep -c "cp.async" $OUT/kc-moe-$SHA.txt
for i in 1 2; do
  for cfg in "BW24_COMBINE_ASYNC=0" "BW24_COMBINE_ASYNC=1" "BW24_COMBINE_ASYNC=2" "BW24_ROUTER_SIDE=1 BW24_FFN_SIDE_AT=0" \
             "BW24_ROUTER_SIDE=1 BW24_FFN_SIDE_AT=1"; do
    [ $(el) -lt 540 ] || break
    row "$cfg" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" $cfg
    row "$cfg" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" $cfg
  done
done
echo "end t=$(el)"
