#!/bin/bash
# next260 (round 45): the acceptance rows (JSON) of Qwen3-8B and Qwen3-30B-A3B Q4_K_M on main after round 45's two
# choice-path changes (bench as new-- in .carry/bins).
SHA=$1
source tools/wip/lib.sh
begin $SHA-json
json $SHA 200 qwen3-8b:Q4_K_M ""
json $SHA 200 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
