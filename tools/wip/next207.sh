#!/bin/bash
# next207 (round 35; carry .carry): bash tools/wip/next207.sh SHA (timeout 560) -- rmsnorm_q8 with the norm at n = 2,048
# / 4,096 as one cluster of n / 256 CTAs a row (BW24_NORM_CLUSTER=1; branch wip/norm-cluster): each CTA loads its 256
# elements only and the sums of squares meet through distributed shared memory behind one cluster barrier, where each
# of rmsnorm_q8_kernel's CTAs reads the whole row from L2 after its wait (2.3-3.7 us a launch, 73 launches a Qwen3-8B
# step: next206's trace). Prediction: +2-4 % on Qwen3-8B / Qwen3.5-9B, +1-2 % on the MoE shapes, unless a 16-CTA
# cluster starts later than 16 free CTAs. Kernel check rmsnorm_q8 (CPU reference, both kernels) and moe (the cluster
# router now waits for its cluster to have started before writing into CTA 0), GPU tests with the cluster on, A/B.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm_q8 moe
check_rows $SHA rmsnorm_q8 'cluster'
export BW24_NORM_CLUSTER=1; gpu_tests $SHA; unset BW24_NORM_CLUSTER
for i in 1 2; do for v in 0 1; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  row "normcl=$v" new $m tg128 "-p 16 -r 3" BW24_NORM_CLUSTER=$v; done; done; done
for v in 0 1; do row "normcl=$v" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -r 3" BW24_NORM_CLUSTER=$v; done
for v in 0 1; do row "normcl=$v d4096" new qwen3-8b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_NORM_CLUSTER=$v; done
echo "ab done t=$(el)"
export BW24_NORM_CLUSTER=1
json $SHA 400 qwen3-8b:Q4_K_M "-normcl"
json $SHA 440 qwen3-8b:Q4_K_M "-q8kv-normcl" --kv q8_0
json $SHA 480 qwen3-30b-a3b:Q4_K_M "-normcl"
echo "end t=$(el)"
