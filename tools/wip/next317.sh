#!/bin/bash
# next317 (round 57): (1) where the merge launch's 3.6 us a layer go at depth 4096 (next316's trace): a timing build
# (branch wip/merge-timing, BW24_MERGE_TIMING=1: globaltimer stamps of the split CTAs' wait release and end, the
# merge CTAs' entry, wait release, runs summed, barrier, O stored; thread 0's cycles a phase); (2) warp_max_redux in
# flash decode alone (branch wip/redux-fd; the routers keep warp_max) against main, alternated. Pack:
#   bash tools/wip/pack-bins.sh base main bw24-bench
#   bash tools/wip/pack-bins.sh new wip/redux-fd bw24-bench      (HEAD on the branch, clean tree)
#   bash tools/wip/pack-bins.sh timing wip/merge-timing bw24-bench
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-timing
t1() { echo "== timing $1 $2"; BW24_MERGE_TIMING=1 timeout 120 ./build-timing/bw24-bench -m synthetic:$1 -p 16 -n 128 -d 4096 -r 1 \
  --device 0 $2 2>&1 | grep -E "tg128|merge timing|  (split|merge)|rror"; }
t1 qwen3-8b:Q4_K_M
t1 qwen3-8b:Q4_K_M "--kv q8_0"
t1 qwen3-30b-a3b:Q4_K_M
ab "-p 512 -n 128 -r 2" qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M
for b in base new; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row $b-d512 $b $m tg128 "-p 0 -d 512 -n 128 -r 2"; done; done
echo "end t=$(el)"
