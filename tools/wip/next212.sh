#!/bin/bash
# next212 (round 36; carry .carry): bash tools/wip/next212.sh SHA -- the staged cluster kernel's timing build
# (BW24_FLASH_TIMING=1: globaltimer at eight points a CTA, medians at exit), 16 and 8 CTAs a cluster, Qwen3-8B at
# depth 4096 (f16 KV).
SHA=$1
source tools/wip/lib.sh
begin $SHA
for c in 1 0; do
  BW24_FLASH_TIMING=1 BW24_FLASH_CLUSTER_CFG=$c timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 128 \
    -d 4096 -r 1 --device 0 2>&1 | grep -E "tg128|cluster timing|^  " | head -12; done
echo "end t=$(el)"
