#!/bin/bash
# next367 (round 64): main (1aacb09, packed as base) against wip/fold-pair2: the folded consumers' 1 / rms once a
# warp, and BW24_CLUSTER_POLICY (1 spread, 2 load balancing) for the folding producers' clusters of two (next366:
# without a cluster, meeting in L2, the downs' CTAs started 7 us earlier but the fences cost 1.3-1.6 us a tail).
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check; bash tools/wip/pack-bins.sh base 1aacb09.
SHA=$1
source tools/wip/lib.sh
begin $SHA-policy
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
kc $SHA gemv_q8_norm_fold
for i in 1 2; do
  row base base qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row new new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row spread new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_CLUSTER_POLICY=1
  row balance new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_CLUSTER_POLICY=2
done
row base base qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row new new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row base-d4096 base qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row new-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
TRACE_POS=0 TRACE_LINES=14 trace_row 8b-balance qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_CLUSTER_POLICY=2
echo "end t=$(el)"
