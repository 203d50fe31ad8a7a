#!/bin/bash
# next206 (round 35; carry .carry with bins bench + kernel check of main 1474550 and .carry/trace as next203 says):
# bash tools/wip/next206.sh SHA (timeout 560) -- the landed cluster router's kernel check and acceptance JSON
# (Qwen3-30B-A3B, Qwen3.6-35B-A3B), then the steps traced (tools/trace): Qwen3-8B with the Q + K / V overlap off and
# on (next203's question), Qwen3-30B-A3B with the cluster router off and on (where its segment went).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe_gate cluster'
json $SHA 200 qwen3-30b-a3b:Q4_K_M ""
json $SHA 200 qwen3.6-35b-a3b:Q4_K_M ""
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
trace() { local tag=$1 m=$2; shift 2
  row "plain $tag" new $m tg128 "-p 16 -n 128 -r 1" "$@"
  row "traced $tag" new $m tg128 "-p 16 -n 128 -r 1" "$@" \
    CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 24 > $OUT/profile-$tag.md 2>&1
  head -14 $OUT/profile-$tag.md; sed -n '/| pos |/,$p' $OUT/profile-$tag.md | sed -n 3,14p; }
trace 8b-overlap0 qwen3-8b:Q4_K_M BW24_QKV_OVERLAP=0
trace 8b-overlap1 qwen3-8b:Q4_K_M BW24_QKV_OVERLAP=1
trace 30b-cluster0 qwen3-30b-a3b:Q4_K_M BW24_GATE_CLUSTER=0
trace 30b-cluster1 qwen3-30b-a3b:Q4_K_M BW24_GATE_CLUSTER=1
echo "end t=$(el)"
