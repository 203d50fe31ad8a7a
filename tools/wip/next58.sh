#!/bin/bash
# next58 (carry .carry only; the programs of next57):  bash tools/wip/next58.sh <sha>  (timeout_s 140)
# next57's rows (-p 16) had OutQ8 at +2.0 % on Qwen3-8B Q4_K_M and -0.5 % on Qwen3-30B-A3B, its JSON (-p 512) at
# 403.5 / 372.7, below earlier rounds' JSON. Decode after a 512-token prompt merges splits (inline, by the last CTA);
# after 16 it mostly does not. Base beside new at -p 512, so the comparison is on the JSON's footing.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
P="-p 512 -n 128 -r 2 -d 0"
for b in base new base new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for b in base new; do [ $(el) -lt 100 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; echo "end t=$(el)"
