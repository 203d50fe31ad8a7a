#!/bin/bash
# next284 (round 51): next283's JSON read lower than main's earlier calls (Qwen3-8B tg128 592.0 against 596.5); the
# acceptance command with the late trigger off and on in the landed binary, alternated, to separate the change from
# the machine start.
SHA=$1
source tools/wip/lib.sh
begin $SHA-json-ab
for i in 1 2; do for t in 0 1; do export BW24_FLASH_LATE_TRIGGER=$t
  json $SHA 400 qwen3-8b:Q4_K_M "-late$t-$i"; done; done
unset BW24_FLASH_LATE_TRIGGER
echo "end t=$(el)"
