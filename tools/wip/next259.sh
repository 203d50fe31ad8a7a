#!/bin/bash
# next259 (round 45): the next layer's Q, K and V weights requested into L2 by flash decode while its attention leaves
# DRAM idle (branch wip/qkv-ahead; cuda::L2Ahead; BW24_QKV_AHEAD 0 off, 1 after the wait evict_last, 2 evict_normal,
# 3 from the idle last split). Carry .carry (new--: bench, model tests, GPU-vs-CPU tests, libbw24).
# Prediction: the Q + K and V launches (5.2 + 2.4 us a Qwen3-8B layer traced, 11.8 + 3.4 MB mostly read after their
# wait) read L2 instead: -2-3 us a layer, +4-6 % tg128 on Qwen3-8B, less on the 30B (6 MB of QKV a layer).
SHA=$1
source tools/wip/lib.sh
begin $SHA-ab
gpu_tests $SHA
for i in 1 2; do for m in 0 1 2 3; do
  row "ahead=$m" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_QKV_AHEAD=$m
done; done
for i in 1 2; do for m in 0 1; do
  row "ahead=$m" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_QKV_AHEAD=$m
done; done
echo "end t=$(el)"
