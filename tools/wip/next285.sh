#!/bin/bash
# Correction (round 52): bw24-bench's tg rows decode at positions 1-128 whatever -p is, not at 512-639, so the
# 3..8-split paths named below never ran in these rows (docs/performance.md, round 52; next291 uses -d 512).
# next285 (round 51): the late trigger held to tokens that see at most 2 splits (positions below 256), after next284
# found no gain at positions 512-639 (the acceptance command's tg128). A/B in one binary at both histories, then the
# acceptance JSON of Qwen3-8B and Qwen3-30B-A3B while time is left.
SHA=$1
source tools/wip/lib.sh
begin $SHA-late2
for t in 0 1; do row short$t new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_FLASH_LATE_TRIGGER=$t; done
for t in 0 1; do row p512-$t new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_LATE_TRIGGER=$t; done
for t in 0 1; do row short$t new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_FLASH_LATE_TRIGGER=$t; done
json $SHA 140 qwen3-8b:Q4_K_M ""
json $SHA 170 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
