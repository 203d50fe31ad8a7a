#!/bin/bash
# next382 (round 69, after next377): the lean instances alone (BW24_LEAN=1, without BW24_LEAN_FLASH, which next377 found
# slower: 641 against 645) at depth 4096 beside main's, alternated, and their acceptance JSONs (f16 twice, q8_0), on
# next377's pack (wip/defer 73c2642). Decides whether the lean GEMV instances land without the flash ones.
SHA=$1
source tools/wip/lib.sh
begin $SHA-lean1
for i in 1 2; do
  row main-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
  row lean-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_LEAN=1
done
BW24_LEAN=1 json $SHA 400 qwen3-8b:Q4_K_M "-lean"
BW24_LEAN=1 json $SHA 400 qwen3-8b:Q4_K_M "-lean-q8kv" --kv q8_0
BW24_LEAN=1 json $SHA 400 qwen3-8b:Q4_K_M "-lean-2"
json $SHA 400 qwen3-8b:Q4_K_M "-main"
echo "end t=$(el)"
