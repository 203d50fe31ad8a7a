#!/bin/bash
# next229 (carry .carry: bench of wip/router-stamps, a timing build; tools/wip/patches/router-stamps.patch):
# bash tools/wip/next229.sh SHA -- where the router cluster's ~5.6 us segment goes: BW24_STAMPS=1 stamps every
# cluster CTA (entry, wait, row loaded + normed, rows landed, products, cluster sync, route, end) and prints medians.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row plain new $m tg128 "-p 16 -n 128 -r 1"
  BW24_STAMPS=1 timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 |
    grep -E "tg128|stamps|cycles" | sed "s/^/$m /"
done
echo "end t=$(el)"
