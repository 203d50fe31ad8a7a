#!/bin/bash
# next178 (carry .carry only): bash tools/wip/next178.sh SHA  (timeout 560) -- round 31: the streamed GEMV's stages
# issued before the PDL wait (BW24_AB_PRE=N: N of them, the rest right after the wait; unset = all, main's), one binary
# (wip/pre-issue fe97a2a as build-pre). Question: do the successor's early bulk copies slow the latency-bound kernels
# before it (norm segments 3-3.5 us after streamed launches against 1.0-2.0 us after warp-per-row ones, next177)?
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do for v in all 0 1; do
  if [ $v = all ]; then row pre=$v pre $m tg128 "-p 16 -n 128 -r 3"; else row pre=$v pre $m tg128 "-p 16 -n 128 -r 3" BW24_AB_PRE=$v; fi
done; done; done
for v in all 0 1; do
  if [ $v = all ]; then row pre=$v pre qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; else row pre=$v pre qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_AB_PRE=$v; fi
done
echo "rows t=$(el)"
export BW24_AB_PRE=0
[ $(el) -lt 480 ] && trace_profile pre qwen3-8b:Q4_K_M 40
echo "end t=$(el)"
