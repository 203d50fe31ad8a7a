#!/bin/bash
# next233 (carry .carry: main b32dcb0's bench as "base" -- built from git archive this time: next231's "base" was the
# new sources, built in a directory whose source was the working tree -- wip/router-fast's bench as "new", .carry/trace):
# bash tools/wip/next233.sh SHA -- tg128 A/B on both MoE shapes, two rounds alternated, the 30B at depth 4096, then
# base's steps traced (next232 traced new).
SHA=$1
source tools/wip/lib.sh
begin $SHA
ab "-p 16 -n 128 -r 2" qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M
for b in base new; do row $b-d4096 $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
for m in 30b:qwen3-30b-a3b 35b:qwen3.6-35b-a3b; do
  TRACE_BUILD=base TRACE_POS=0 TRACE_LINES=8 trace_row ${m%%:*}-base ${m#*:}:Q4_K_M "-p 16 -n 128 -r 1"; done
echo "end t=$(el)"
