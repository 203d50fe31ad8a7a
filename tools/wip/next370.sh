#!/bin/bash
# next370 (round 64): the landing build's acceptance JSONs (c561fba's device code = f822861's default path, packed as
# base): Qwen3.5-9B and Qwen3-30B-A3B; then Q + K and V overlapping at depth too (BW24_QKV_OVERLAP=2, wip/overlap-depth
# packed as new) against the plain chain there, for the f16 depth ratio's margin (85.0 / 85.3 % in next369).
SHA=$1
source tools/wip/lib.sh
begin $SHA-depth
JSON_BUILD=base json $SHA 400 qwen3.5-9b:Q4_K_M ""
JSON_BUILD=base json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
for i in 1 2; do
  row plain new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
  row overlap new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_QKV_OVERLAP=2
done
row plain-q8 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0"
row overlap-q8 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_QKV_OVERLAP=2
row plain-9b new qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row overlap-9b new qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_QKV_OVERLAP=2
row plain-30b new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row overlap-30b new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_QKV_OVERLAP=2
echo "end t=$(el)"
