#!/bin/bash
# next366 (round 64): the folding producers' two CTAs of a block meeting in L2 (NormOut::pair, no cluster launch)
# against the cluster (BW24_FOLD_PAIR_L2=0). next365 traced main with and without the fold against the normed
# launches' ablation (672.5 tok/s): the folded O projection +0.82 us, the downs +0.9 / +1.0 us, their CTAs starting
# 0.8-3.9 us later (lead), Q + K after them +0.76 us. Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check tests/bw24_gpu_vs_cpu_tests tests/bw24_model_tests (wip/fold-pair).
SHA=$1
source tools/wip/lib.sh
begin $SHA-pair
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
kc $SHA gemv_q8_norm_fold
for i in 1 2; do
  row cluster new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_PAIR_L2=0
  row pair-l2 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
done
row cluster new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FOLD_PAIR_L2=0
row pair-l2 new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
for b in cluster pair-l2; do e=BW24_FOLD_PAIR_L2=$([ $b = cluster ] && echo 0 || echo 1)
  row $b-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" $e; done
TRACE_POS=0 TRACE_LINES=16 trace_row 8b-pair qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
gpu_tests $SHA
echo "end t=$(el)"
