#!/bin/bash
# next182 (carry .carry only): bash tools/wip/next182.sh SHA  (timeout 300) -- round 31: the landed build (884b882) traced
# (Qwen3-8B, then Qwen3-30B-A3B: which segments the compact flash decode shortened; next177 is the same on 57a6cde), and
# two more acceptance rows of Qwen3-8B Q4_K_M (f16 KV, then q8_0 KV): next181's depth ratios read 84.5 % and 90.3 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
trace_profile new qwen3-8b:Q4_K_M 16
# As run, this row passed an empty argument after its tag (the bench printed its usage line); the row here is the
# fixed form, which ran alone in the next call (`source tools/wip/lib.sh; begin again; json 884b882 100 ...`).
json $SHA 200 qwen3-8b:Q4_K_M -again
json $SHA 200 qwen3-8b:Q4_K_M -kv-q8_0-again --kv q8_0
[ $(el) -lt 170 ] && trace_profile new qwen3-30b-a3b:Q4_K_M 16
echo "end t=$(el)"
