#!/bin/bash
# next224 (round 38; carry .carry: bench of wip/combine-timing 0c7cbc5, tools/wip/patches/combine-timing.patch): bash tools/wip/next224.sh SHA -- where the routed
# gate-up's and the routed down + combine's time goes: globaltimer / clock64 stamps in thread 0 of every CTA
# (BW24_STAMPS=1, dumped at exit), Qwen3-30B-A3B and Qwen3.6-35B-A3B tg128, beside plain rows of the same binary.
SHA=$1
source tools/wip/lib.sh
begin $SHA
row plain new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 1"
BW24_STAMPS=1 timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 128 -r 1 --device 0 2>&1 | grep -E "tg128|stamps|cycles"
BW24_STAMPS=1 timeout 90 ./build-new/bw24-bench -m synthetic:qwen3.6-35b-a3b:Q4_K_M -p 16 -n 128 -r 1 --device 0 2>&1 | grep -E "tg128|stamps|cycles"
echo "end t=$(el)"
