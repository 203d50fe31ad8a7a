#!/bin/bash
# next263 (round 46): next262 had the 8-pick prefetch at 549 against 654 off, the wrong experts' bytes at 544 (the
# hits worth +0.9 %), and 8 fetch CTAs far slower than 96 (485): the bulk prefetches seem to hold the main chain's own
# bulk copies in the same SMs' queues. Here the same prefetch by the LSU (prefetch.global.L2 a line), right and wrong.
SHA=$1
source tools/wip/lib.sh
begin $SHA-prefetch3
r() { row "$1" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" "${@:2}"; }
r "pf 0" BW24_MOE_PREFETCH=0
r "pf 8 lsu right" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_LSU=1
r "pf 8 lsu wrong" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_LSU=1 BW24_MOE_PREFETCH_WRONG=64
r "pf 0" BW24_MOE_PREFETCH=0
echo "end t=$(el)"
