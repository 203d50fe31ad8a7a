#!/bin/bash
# next230 (carry .carry: main b32dcb0's kernel check and GPU tests as "new", wip/router-stamps 534091a's bench as
# "stamps"): bash tools/wip/next230.sh SHA -- main's moe kernel check (1a6d2f1's "register loads" rows run for the
# first time) and GPU tests, then round 39's prepared router timing (next229): plain tg128 rows and BW24_STAMPS=1 medians.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'register loads' 'cp.async'
gpu_tests $SHA
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row plain stamps $m tg128 "-p 16 -n 128 -r 1"
  BW24_STAMPS=1 timeout 90 ./build-stamps/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 |
    grep -vE "^\s*$|load|progress" | tail -30 | sed "s/^/$m /"
done
echo "end t=$(el)"
