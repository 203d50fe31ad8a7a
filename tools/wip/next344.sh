#!/bin/bash
# next344 (round 61): the combine's expert rows by cp.async.bulk (wip/combine-bulk): kernel check moe with
# BW24_COMBINE_BULK=3 (every Q4_K / Q6_K combine of two row groups that quantizes its input takes the bulk copies;
# bit-equal rows or FAIL), then one binary alternated: 0 (main's forms), 1 (Q6_K bulk), 3 (Q6_K and Q4_K bulk).
# Pack: bash tools/wip/pack-bins.sh cbulk HEAD bw24-bench bw24-kernel-check (on the branch).
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-bulk
export BW24_COMBINE_BULK=3; KC_BUILD=cbulk kc $SHA moe; unset BW24_COMBINE_BULK
for i in 1 2; do for v in 0 1 3; do
  row bulk=$v cbulk qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_BULK=$v; done; done
for v in 0 1 3; do row bulk=$v cbulk qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_BULK=$v; done
for v in 0 3; do row bulk=$v-d4096 cbulk qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_COMBINE_BULK=$v; done
echo "end t=$(el)"
