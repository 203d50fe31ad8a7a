#!/bin/bash
# next154 (carry .carry only): bash tools/wip/next154.sh SHA  (timeout 300) -- round 27: next153's build again: a third
# A/B round on Qwen3-8B and the acceptance JSON of Qwen3-8B and Qwen3.5-9B Q4_K_M on it.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for b in main new main new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done
json $SHA 200 qwen3-8b:Q4_K_M ""
json $SHA 200 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
