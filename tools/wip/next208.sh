#!/bin/bash
# next208 (round 35; carry .carry): bash tools/wip/next208.sh SHA (timeout 330) -- the FFN weights' tails into L2 from a
# side stream of the decode graph (BW24_FFN_SIDE=MB; branch wip/ffn-side). next205's version issued the prefetches
# from flash decode's CTAs and lost 10 % at every size (8-32 MB): likely the CTAs could not retire before their bulk
# prefetches drained, so the critical path waited. Here a separate kernel, forked after the layer's attention products
# (or after its input norm: AT=0), runs beside flash decode, O and the norm while DRAM is idle, and joins before the
# output head. Prediction: +3-8 % on Qwen3-8B if the gate-up's post-wait bytes come from L2; a loss if the prefetch
# competes with the attention launches' early copies.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export BW24_FFN_SIDE=16; gpu_tests $SHA; unset BW24_FFN_SIDE
for i in 1 2; do for c in "0 1 0" "16 1 0" "16 1 1" "32 1 1" "16 0 1"; do set -- $c
  row "side=$1 at=$2 kind=$3" new qwen3-8b:Q4_K_M tg128 "-p 16 -r 3" BW24_FFN_SIDE=$1 BW24_FFN_SIDE_AT=$2 BW24_FFN_SIDE_KIND=$3
done; done
echo "end t=$(el)"
