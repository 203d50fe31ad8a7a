#!/bin/bash
# next211 (round 36; carry .carry with bins and .carry/trace): bash tools/wip/next211.sh SHA (timeout 560) -- next210
# traced cluster_kernel at 17.6-22.9 us a Qwen3-8B layer at depth 4096 against 8.5 + 4.4 for split + merge: its warps
# walked 3-5 tiles each, a memory round trip a tile. Here each warp stages its tiles' f16 K and V rows into three slots
# of shared memory with bulk copies, all the history requested before the PDL wait (BW24_FLASH_CLUSTER_CFG: 0 = 16 CTAs
# a cluster, 1 = 8). Kernel check attention families, A/B against BW24_FLASH_CLUSTER=0, both traced.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'cluster'
check_rows $SHA attention 'bits'
for i in 1 2; do row "off" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=0
  for c in 0 1; do row "cfg=$c" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER_CFG=$c; done; done
for c in 0 1; do row "cfg=$c 30b" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER_CFG=$c; done
row "off 30b" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_CLUSTER=0
echo "ab done t=$(el)"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
trace() { local tag=$1 m=$2; shift 2
  row "traced $tag" new $m tg128 "-p 16 -n 128 -d 4096 -r 1" "$@" \
    CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 24 > $OUT/profile-$tag.md 2>&1
  head -8 $OUT/profile-$tag.md; sed -n '/| pos |/,$p' $OUT/profile-$tag.md | sed -n 3,9p; }
for c in 0 1; do trace cfg$c qwen3-8b:Q4_K_M BW24_FLASH_CLUSTER_CFG=$c; done
echo "end t=$(el)"
