#!/bin/bash
# next391 (round 73): next389 and next390 ran on an H100 (round 73's first calls): the L2 requests +0.3 % at depth
# 4096, the one-matrix gate-up stage -0.4 % at depth 0. Both were designed from the H200's traces, whose DRAM is
# 1.43x faster beside the same L2, so this call reads them on an H200 only (on any other card it stops at once).
# One binary (land2.tar.xz, wip/land-bymat 69f0df8, which holds both switches), alternated three ways:
#   base = BW24_KV_AHEAD=0 BW24_GATEUP_BYMAT=0 (main's code paths), kv = BW24_GATEUP_BYMAT=0, both = neither off.
# Qwen3-8B Q4_K_M tg128 at depth 4096 (f16 twice, q8_0 once) and depth 0 (twice).
# Run: bash tools/wip/next391.sh 69f0df8, carrying .carry's rtlib, stories260K files and bins/land2.tar.xz.
SHA=$1
source tools/wip/lib.sh
begin $SHA-h200ab
[ "$CARD" = h200 ] || { echo "card $CARD: not an H200, nothing run"; exit 0; }
D="-p 16 -n 128 -d 4096 -r 2" P="-p 512 -n 128 -r 2" Q=qwen3-8b:Q4_K_M
three() { local t=$1 a=$2 i; for i in $(seq $3); do
  row base-$t land2 $Q tg128 "$a" BW24_KV_AHEAD=0 BW24_GATEUP_BYMAT=0
  row kv-$t land2 $Q tg128 "$a" BW24_GATEUP_BYMAT=0
  row both-$t land2 $Q tg128 "$a"; done; }
three d4096 "$D" 2
three d0 "$P" 2
three q8-d4096 "$D --kv q8_0" 1
echo "end t=$(el)"
