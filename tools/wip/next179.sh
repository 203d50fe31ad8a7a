#!/bin/bash
# next179 (carry .carry only): bash tools/wip/next179.sh SHA  (timeout 590) -- round 31: the streamed GEMV's early bytes
# into L2 instead of (or beside) shared memory before the PDL wait, one binary (wip/pre-issue fef76b6 as build-pre):
# BW24_AB_PRE=N stages into shared memory before the wait (unset: all, main's), BW24_AB_L2PRE=M items after those
# prefetched into L2 (cp.async.bulk.prefetch.L2). next178: with no early stages the norms' segments fell 3-3.5 -> 1.6-2 us
# and flash decode's 7.6 -> 6.1, but the GEMVs lost more (8B 553 -> 501). Question: is the congestion the SMs' inbound
# path (L2 prefetch avoids it) or L2 / DRAM (it does not)?
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
v() { local tag=$1 m=$2; shift 2; row "$tag" pre $m tg128 "-p 16 -n 128 -r 3" "$@"; }
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  v main $m
  v pre0-l2=3 $m BW24_AB_PRE=0 BW24_AB_L2PRE=3
  v pre0-l2=6 $m BW24_AB_PRE=0 BW24_AB_L2PRE=6
  v all-l2=3 $m BW24_AB_L2PRE=3
  v pre1-l2=4 $m BW24_AB_PRE=1 BW24_AB_L2PRE=4
done; done
echo "rows t=$(el)"
m=qwen3-30b-a3b:Q4_K_M; v main $m; v pre0-l2=3 $m BW24_AB_PRE=0 BW24_AB_L2PRE=3; v all-l2=3 $m BW24_AB_L2PRE=3
echo "30b t=$(el)"
export BW24_AB_PRE=0 BW24_AB_L2PRE=3
[ $(el) -lt 470 ] && trace_profile pre qwen3-8b:Q4_K_M 30
echo "end t=$(el)"
