#!/bin/bash
# Packed here (branch wip/combine-stamps d20fe71 on wip/down-ahead, build-pack/dev): bw24-bench into .carry/bins; carry [".carry"].
# next272 (round 49): where the 30B's MoE down + combine spends its time, cold and with its experts in L2.
# wip/combine-stamps (on wip/down-ahead): BW24_STAMPS=1 stamps thread 0 of every combine CTA at its phases
# (globaltimer ns, clock64 cycles at ~1.98 GHz) and prints medians at exit; BW24_DOWN_AHEAD=1 has the routed gate-up
# request each pair's down slice into L2 first (next271: the Q6_K combine 7.90 -> 7.49 us, Q4_K 5.18 -> 4.51).
# Question: why the Q6_K combine takes ~3 us more than the Q4_K one with both hot.
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-stamps
st() { env "$@" timeout 120 ./build-new/bw24-bench -m synthetic:$M -p 16 -n 128 -r 1 --device 0 2>&1 |
  grep -E 'tg128|stamps|cycles' | sed "s/^/$M $* | /"; }
M=qwen3-30b-a3b:Q4_K_M
row plain new $M tg128 "-p 16 -n 128 -r 2"
st BW24_STAMPS=1 BW24_DOWN_AHEAD=0
st BW24_STAMPS=1 BW24_DOWN_AHEAD=1
st BW24_STAMPS=1 BW24_COMBINE_ASYNC=0
M=qwen3.6-35b-a3b:Q4_K_M
st BW24_STAMPS=1
echo "end t=$(el)"
