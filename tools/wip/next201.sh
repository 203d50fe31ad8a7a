#!/bin/bash
# next201 (carry .carry: bins new-- = main 1bb77da's bench, kernel check and GPU tests; rtlib, stories260K):
# bash tools/wip/next201.sh 1bb77da (timeout 560) -- the landed Q + K / V overlap verified on the landed binaries
# (kernel check gemv_q8_chain and gemv_q8_streamed, GPU tests with the default chain), then round 34's acceptance
# rows where it moves them (Qwen3-30B-A3B, Qwen3-8B f16 and q8_0 KV, Qwen3.6-35B-A3B).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_chain gemv_q8_streamed
gpu_tests $SHA
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 430 qwen3-8b:Q4_K_M ""
json $SHA 460 qwen3-8b:Q4_K_M -q8kv --kv q8_0
json $SHA 490 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
