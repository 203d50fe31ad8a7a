#!/bin/bash
# next262 (round 46): next261 measured the expert prefetch at 95.5 % of the 30B's routed experts predicted, yet tg128
# 655 -> 523 (8 picks), 570 (gate / up only), 490 (12): the step grew by the prefetched bytes at ~3 TB/s, as if nothing
# were saved. Here: the same bytes of the wrong experts (BW24_MOE_PREFETCH_WRONG: the cost alone), the fork after the
# Q/K/V launch (AT=1, less HBM traffic of the chain to compete with), and fewer fetch CTAs (a slower trickle).
SHA=$1
source tools/wip/lib.sh
begin $SHA-prefetch2
r() { row "$1" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" "${@:2}"; }
r "pf 0" BW24_MOE_PREFETCH=0
r "pf 8 wrong" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_WRONG=64
r "pf 8 right" BW24_MOE_PREFETCH=8
r "pf 8 at1 c96" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_AT=1
r "pf 8 at1 c16" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_AT=1 BW24_MOE_PREFETCH_CTAS=16
r "pf 8 at0 c8" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_CTAS=8
r "pf 8 nodown at1 c16" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_DOWN=0 BW24_MOE_PREFETCH_AT=1 BW24_MOE_PREFETCH_CTAS=16
r "pf 2 at1 c16" BW24_MOE_PREFETCH=2 BW24_MOE_PREFETCH_AT=1 BW24_MOE_PREFETCH_CTAS=16
r "pf 0" BW24_MOE_PREFETCH=0
echo "end t=$(el)"
