#!/bin/bash
# next209 (round 36; carry .carry): bash tools/wip/next209.sh SHA (timeout 560) -- flash decode's tokens past 8 visible
# splits as one cluster of 8 CTAs a KV head (cluster_kernel, branch wip/flash-cluster; BW24_FLASH_CLUSTER=0: the split
# kernel + merge kernel in the same binary). Kernel check attention families (every long D = 128 f16 / q8_0 case
# against the reference, "cluster taken" and "cluster off" rows, head groups and fused-rope bits), then the A/B at
# depth 4096 (f16 and q8_0 KV), depth 0 and Qwen3-30B-A3B. Prediction: Qwen3-8B at depth 4096 +5-10 %, depth 0 unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'cluster taken'
check_rows $SHA attention 'cluster off'
check_rows $SHA attention 'head groups'
grep -m3 'cluster taken' $OUT/kc-attention-$SHA.txt
for i in 1 2; do for v in 0 1; do
  row "fcl=$v" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=$v; done; done
for v in 0 1; do row "fcl=$v q8kv" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_FLASH_CLUSTER=$v; done
for v in 0 1; do row "fcl=$v d0" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_FLASH_CLUSTER=$v; done
for v in 0 1; do row "fcl=$v" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=$v; done
echo "ab done t=$(el)"
json $SHA 420 qwen3-8b:Q4_K_M "-fcl"
json $SHA 470 qwen3-8b:Q4_K_M "-q8kv-fcl" --kv q8_0
echo "end t=$(el)"
