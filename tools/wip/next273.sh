#!/bin/bash
# Packed here (branch wip/combine-wide, build-pack/dev): bw24-bench and bw24-kernel-check into .carry/bins; carry [".carry"].
# next273 (round 49): wip/combine-wide. next272's stamps: the 30B's Q6_K combine spends 8,375 cycles between its wait
# and the end of its staging (its 20 KB of weight copies and the 7.7 KB of activation rows, one CTA's), 7,201 with
# the weights already in L2; the rows are staged by each of the 512 CTAs (3.9 MB of the launch's 14.2 MB into the
# SMs). Two row groups a CTA (16 warps, 256 CTAs) stage them once for both: 2.0 MB. Same warps, same bits.
# Prediction: the combine -0.3-0.6 us a layer: 30B tg128 +1-2 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-wide
export BW24_COMBINE_WIDE=1; kc $SHA moe; unset BW24_COMBINE_WIDE
check_rows $SHA moe 'moe down + combine'
for i in 1 2; do for v in 0 1; do
  row "wide$v" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_WIDE=$v; done; done
for v in 0 1; do row "wide$v" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_WIDE=$v; done
echo "end t=$(el)"
