#!/bin/bash
# next149 (carry .carry only): bash tools/wip/next149.sh SHA  (timeout 420) -- round 27: the acceptance JSON of the Qwen3.5
# shapes with flash decode's D = 256 tensor-core products (new = wip/decode-mma-256's bench), and the step traced
# (tools/trace, as next142) on Qwen3.5-9B and Qwen3-8B: where the D = 256 decode's time goes at depth 0.
# Pack: next148's bins; .carry/trace = libbw24-kernel-trace.so, libcupti.so.13, step_profile.py.
SHA=$1
source tools/wip/lib.sh
begin $SHA
json $SHA 200 qwen3.5-9b:Q4_K_M ""
json $SHA 200 qwen3.6-35b-a3b:Q4_K_M ""
json $SHA 200 qwen3.5-27b:Q4_K_M ""
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for m in qwen3.5-9b:Q4_K_M qwen3-8b:Q4_K_M; do
  [ $(el) -lt 330 ] || break
  trace_profile new $m 30
done
echo "end t=$(el)"
