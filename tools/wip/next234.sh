#!/bin/bash
# next234 (carry .carry: main ce7971d's bench, kernel check and tests as "new"): bash tools/wip/next234.sh SHA --
# the landing build of the router change: moe kernel check, GPU tests, the MoE acceptance rows (JSON).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate cluster'
gpu_tests $SHA
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 450 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
