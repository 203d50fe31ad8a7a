#!/bin/bash
# next196 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next196.sh SHA  (timeout 420)
# -- round 33's landed tree (main d463625: gdn decode's history turn after the conv, its inputs at once after the
# wait): GPU tests, kernel check gdn on the landed binary, then the acceptance rows of the shapes with delta nets
# (JSON), most needed first.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
kc $SHA gdn
json $SHA 360 qwen3.5-9b:Q4_K_M ""
json $SHA 360 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 360 qwen3.5-9b:Q8_0 ""
json $SHA 360 qwen3.5-27b:Q4_K_M ""
echo "end t=$(el)"
