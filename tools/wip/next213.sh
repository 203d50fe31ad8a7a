#!/bin/bash
# next213 (round 36; carry .carry): bash tools/wip/next213.sh SHA -- next212's timing build found the staged cluster
# kernel issue-bound: a 256-byte bulk copy a key row, serialized through the uniform datapath (~9 ns each, 28 GB/s an
# SM). Here a tile's K and V come as two 2D tensor copies (a 128 x 16 box of the cache). Kernel check attention
# families; A/B (BW24_FLASH_CLUSTER_CFG 0 = 8 CTAs a cluster, 1 = 16) against split + merge; the timing build's stamps.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'cluster'
check_rows $SHA attention 'bits'
for i in 1 2; do row "off" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=0
  for c in 0 1; do row "cfg=$c" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER_CFG=$c; done; done
for c in 0 1; do
  BW24_FLASH_TIMING=1 BW24_FLASH_CLUSTER_CFG=$c timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 128 \
    -d 4096 -r 1 --device 0 2>&1 | grep -E "tg128|cluster timing|^  " | head -12; done
row "off 30b" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=0
row "cfg=0 30b" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER_CFG=0
echo "end t=$(el)"
