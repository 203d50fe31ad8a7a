#!/bin/bash
# next189 (carry .carry/bins with the bench only, .carry/rtlib, .carry/trace, the stories260K files): bash
# tools/wip/next189.sh SHA  (timeout 400) -- where round 32's step goes, for the next round: the Qwen3.5-9B step traced
# with the typed delta-net kernel (561.6 against 565), Qwen3-30B-A3B's, and the Qwen3-8B step with attention ablated
# (BW24_ABLATE=attn) at depth 0 and 4096: the depth cost that is attention's own (split + merge) against the rest.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for d in 0 4096; do
  row full new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d $d -r 2"
  row no-attn new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d $d -r 2" BW24_ABLATE=attn
done
trace_profile new qwen3.5-9b:Q4_K_M 30
trace_profile new qwen3-30b-a3b:Q4_K_M 30
echo "end t=$(el)"
