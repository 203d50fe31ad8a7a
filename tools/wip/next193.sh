#!/bin/bash
# next193 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next193.sh  (timeout 400)
# -- where the delta net's decode step spends its ~7 us segment (Qwen3.5-9B trace, round 32): a timing build (branch
# wip/gdn-timing: globaltimer stamps per CTA of decode_kernel<4, 128, 128, 1> at entry, after its state loads, after the
# PDL wait, at the end; medians over the calls, printed at exit) and the host's part of a step (BW24_GRAPH_REPLAYS=2:
# the graph back to back) on main's bench.
source tools/wip/lib.sh
begin next193
for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  BW24_GDN_TIMING=32 timeout 90 ./build-gdnt/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 | grep -E 'tg128|gdn timing|^  '
done
for m in qwen3.5-9b:Q4_K_M qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for k in 1 2 1 2; do
  row "replays=$k" base $m tg128 "-p 16 -r 2" BW24_GRAPH_REPLAYS=$k; done; done
echo "end t=$(el)"
