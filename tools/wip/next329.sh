#!/bin/bash
# next329 (round 59): main with the router room (62d105f; its code is 04b716b's, packed as build-new) traced at depth 0
# (tg128 -p 16 -n 128: positions 1-128), Qwen3-30B-A3B and Qwen3-8B, 48 per-position rows each: where the step goes
# now, for the next lever on the two missed tg128 targets. Pack: 04b716b's bw24-bench as new, and
# .carry/bins/trace--libcupti.so.13.xz, trace--libbw24-kernel-trace.so.xz (README of tools/wip).
SHA=$1
source tools/wip/lib.sh
begin $SHA-trace
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
trace_profile new qwen3-30b-a3b:Q4_K_M 40
trace_profile new qwen3-8b:Q4_K_M 40
echo "end t=$(el)"
