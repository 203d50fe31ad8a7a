#!/bin/bash
# next197 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next197.sh  (timeout 330; one round, for the time left)
# -- moe_gate's router row into registers before the PDL wait (branch wip/router-ahead = new, with a kernel-check
# case of 8,448 columns; its loads went out after the wait, the row only prefetched into L2 before it) against round
# 33's landed main d463625 (base). Prediction: Qwen3-30B-A3B and Qwen3.6-35B-A3B +0.5-1.5 % (one L2 round trip,
# ~0.3-0.6 us, off each MoE layer's router). Then flash decode's split kernel timed as next194 timed the delta net
# (branch wip/flash-timing = ft: globaltimer at eight points per CTA of the kQ8Step instances): Qwen3-8B at depth
# 4096 (f16 and q8_0 KV) and at depth 0.
source tools/wip/lib.sh
begin next197
kc next197 moe
check_rows next197 moe 'moe_gate'
for b in base new; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do row $b $b $m tg128 "-p 16 -r 3"; done; done
for a in "-d 4096" ""; do
  echo "== flash timing, qwen3-8b:Q4_K_M $a"
  BW24_FLASH_TIMING=1 timeout 90 ./build-ft/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 128 -r 1 $a --device 0 2>&1 |
    grep -E 'tg128|flash timing|^  '
done
echo "end t=$(el)"
