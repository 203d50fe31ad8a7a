#!/bin/bash
# next204 (prepared in round 34; run in round 35 as next205.sh, the cluster router landed and its patch removed; carry .carry): bash tools/wip/next204.sh SHA (timeout 560) -- the MoE router
# of one token as one cluster of 16 CTAs (tools/wip/patches/gate-cluster-smem.patch on main e91583b+; one binary,
# BW24_GATE_CLUSTER=1 the cluster kernel, unset gate_kernel). Each CTA bulk-copies its 8 (30B) / 16 (35B) rows of the
# 2,048-wide F32 router into shared memory before the PDL wait; after it the products are gate_kernel's (same bits)
# and the logits meet in CTA 0's shared memory behind one cluster barrier, instead of a fence, an L2 atomic and the
# last CTA's L2 reads (gate_kernel: 5.4-6.2 us a Qwen3-30B-A3B layer, next189's trace). Prediction: +3-6 % on
# Qwen3-30B-A3B and Qwen3.6-35B-A3B tg128, unless the 16 CTAs of 64-128 KB cannot start early beside the previous
# launches (then nothing or a loss). Pack (branch from main, git apply the patch, commit, clean tree):
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe_gate cluster'
export BW24_GATE_CLUSTER=1; gpu_tests $SHA; unset BW24_GATE_CLUSTER
for i in 1 2; do for v in 0 1; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row "cluster=$v" new $m tg128 "-p 16 -r 3" BW24_GATE_CLUSTER=$v; done; done; done
for v in 0 1; do row "cluster=$v d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_GATE_CLUSTER=$v; done
echo "end t=$(el)"
