#!/bin/bash
# next218 (round 37; carry .carry: bench, GPU tests and libbw24 of main with the four-CTA gate-up bound):
# bash tools/wip/next218.sh SHA -- the GPU tests and the acceptance rows of the MoE shapes on the landing commit.
SHA=$1
source tools/wip/lib.sh
begin $SHA
gpu_tests $SHA
json $SHA 200 qwen3-30b-a3b:Q4_K_M ""
json $SHA 300 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
