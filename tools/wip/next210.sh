#!/bin/bash
# next210 (round 36; carry .carry with bins and .carry/trace): bash tools/wip/next210.sh SHA (timeout 560) -- next209
# found cluster_kernel (8 CTAs of 12 warps, 168 registers: an SM each) 6.5 % slower at depth 4096. Three shapes in one
# binary (BW24_FLASH_CLUSTER_CFG: 0 = 8 x 12 warps, 1 = 8 x 8 warps at two CTAs an SM, 2 = 16 x 8 warps) against the
# split + merge kernels (BW24_FLASH_CLUSTER=0), then each traced at depth 4096 (per-layer segments).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'cluster'
check_rows $SHA attention 'bits'
for i in 1 2; do row "off" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=0
  for c in 0 1 2; do row "cfg=$c" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER_CFG=$c; done; done
echo "ab done t=$(el)"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
trace() { local tag=$1 m=$2; shift 2
  row "traced $tag" new $m tg128 "-p 16 -n 128 -d 4096 -r 1" "$@" \
    CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 24 > $OUT/profile-$tag.md 2>&1
  head -12 $OUT/profile-$tag.md; sed -n '/| pos |/,$p' $OUT/profile-$tag.md | sed -n 3,12p; }
trace off qwen3-8b:Q4_K_M BW24_FLASH_CLUSTER=0
for c in 0 1 2; do trace cfg$c qwen3-8b:Q4_K_M BW24_FLASH_CLUSTER_CFG=$c; done
echo "end t=$(el)"
