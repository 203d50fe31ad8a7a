#!/bin/bash
# next381 (round 69, for a device call): wip/ticket-merge 4814795, the ticket merge (docs/performance.md round 69, next
# item 4): past 8 visible splits the last G split CTAs of a group merge one query head each, no merge launch; one binary,
# BW24_FLASH_TICKET=1 switches it on (without it: the merge launch, main's path). Its pack is
# build-pack/ticket-4814795.tar.xz (this machine, build-dev at 4814795). Before the call, make it the carried pack:
#   mv .carry/bins/new.tar.xz build-pack/new-73c2642.tar.xz; cp build-pack/ticket-4814795.tar.xz .carry/bins/new.tar.xz
# then run(carry [".carry"], timeout 600): bash tools/wip/next381.sh 4814795; afterwards move next377's pack back.
# Correctness first (the merge paths: positions 1,025-17,000 in the attention families, the graph across the merge
# boundary and run-ahead in the GPU tests), then tg128 at depths 4096 (f16 and q8_0 caches), 2048 and 0 (no merge
# there: the switch must not move it), alternated. Prediction: +2-3 % at 4096, none at 0. ~420 s.
SHA=$1
source tools/wip/lib.sh
begin $SHA-ticket
BW24_FLASH_TICKET=1 kc_one $SHA attention attention_rope attention_bound
grep -c " ok " "$OUT/kc-attention-$SHA.txt"
BW24_FLASH_TICKET=1 gpu_tests $SHA
for i in 1 2; do for sw in 0 1; do
  row "ticket=$sw" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_TICKET=$sw
done; done
for sw in 0 1; do
  row "ticket=$sw q8kv" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_FLASH_TICKET=$sw
  row "ticket=$sw d2048" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 2048 -r 2" BW24_FLASH_TICKET=$sw
  row "ticket=$sw d0" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_FLASH_TICKET=$sw
  row "ticket=$sw 30b" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_TICKET=$sw
done
echo "end t=$(el)"
