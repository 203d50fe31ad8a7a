#!/bin/bash
# next142 (carry .carry only): bash tools/wip/next142.sh SHA  (timeout 420) -- round 26: the decode step kernel by kernel
# inside the graph (tools/trace: CUPTI concurrent-kernel records via CUDA_INJECTION64_PATH), main = 80de557's bench.
# Pack: tools/wip/pack-bins.sh main 80de557 bw24-bench; .carry/trace = libbw24-kernel-trace.so, libcupti.so.13 (the
# build machine's, CUDA 13.0), step_profile.py. Each shape: a plain tg128 row, the same run traced (its tok/s says
# how much the tracing perturbs), the profile of its last 100 steps.
SHA=$1
source tools/wip/lib.sh
begin $SHA
mkdir -p build-new && cp build-main/bw24-bench build-new/ 2>/dev/null
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:Q8_0; do
  [ $(el) -lt 330 ] || break
  trace_profile main $m
done
xz -T8 -c /tmp/trace-qwen3-8b-Q4_K_M.csv > $OUT/trace-qwen3-8b-Q4_K_M.csv.xz 2>/dev/null
echo "end t=$(el)"
