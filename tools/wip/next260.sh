#!/bin/bash
# next260 (round 45): main with the CUDA runner split in three files (wip/split-runner): GPU tests, then the acceptance
# rows (JSON) of Qwen3-8B and Qwen3-30B-A3B Q4_K_M after round 45's two choice-path changes. Carry .carry (new--:
# bench, model tests, GPU-vs-CPU tests, libbw24).
SHA=$1
source tools/wip/lib.sh
begin $SHA-json
gpu_tests $SHA
json $SHA 40 qwen3-8b:Q4_K_M ""
json $SHA 85 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
