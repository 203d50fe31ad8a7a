#!/bin/bash
# next146 (carry .carry only): bash tools/wip/next146.sh SHA  (timeout 240) -- round 26: the acceptance JSON of the landed
# four-segment build (406d569's bench = main's device code) for the hybrid shapes it changes: Qwen3.6-35B-A3B and
# Qwen3.5-27B Q4_K_M (issue 5's recorded rows).
SHA=$1
source tools/wip/lib.sh
begin $SHA
json $SHA 150 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 200 qwen3.5-27b:Q4_K_M ""
echo "end t=$(el)"
