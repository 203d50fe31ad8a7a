#!/bin/bash
# next220 (round 37; carry .carry: bench of wip/gateup-one-wave): bash tools/wip/next220.sh SHA -- the Q4_K gate-up at
# six CTAs an SM (40 registers, 132 bytes of spills) where four an SM take more than one wave (Qwen3-30B-A3B's 768
# routed gate-up CTAs: one wave of 792 instead of 528 + 240). One binary, BW24_GATE_UP_ONE_WAVE=0 = four an SM (main).
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2; do for s in 0 1; do
  row "one_wave=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_GATE_UP_ONE_WAVE=$s; done; done
echo "end t=$(el)"
