#!/bin/bash
# next105 (carry .carry only): bash tools/wip/next105.sh SHA  (timeout 560)
# new = wip/next-cursor SHA (218a5bd, on main 00c3b61), packed from its clean HEAD; base = main 00c3b61's bench.
# Two changes, both outside the sums (the same bits; the kernel check compares them with the single-matrix and the
# multi-token kernels):
# 1. (89b61b9) producer and consumers walk their items with a Cursor (row group, K chunk, ring slot, barrier phase
#    stepped by compares) instead of i / chunks, i % chunks, i % stages, i / stages: two 32-bit divisions (~20
#    dependent instructions each) an item in the consumers' loop, ahead of their loads' addresses. BF16 store
#    instance's consumer loop 286 -> 240 instructions; static counts 1559 -> 1445 (BF16 store), 1924 -> 1841 (Q4_K
#    store), 2085 -> 2001 (Q6_K store). Registers: F16 / BF16 and Q6_K unchanged, Q4_K / Q5_K 60-66 -> 62-64, no spills.
# 2. (218a5bd) CTA b takes row groups b, b + grid, ... instead of a contiguous run; BW24_STREAM_CONTIG=1 restores the
#    runs (A/B in one binary). With the CTAs of an SM being b, b + 132, ..., the runs put 8 row groups of F16 / BF16
#    Q, K, V (768 groups on 528 CTAs) on half the SMs and 4 on the rest; dealt in turn, 6 and 5. Every other Qwen3
#    launch has the same busiest SM either way (tools: a count in docs/performance.md round 19).
# Prediction: Qwen3-8B BF16 tg128 217 -> ~226 (2: Q, K, V ~20 -> ~15 us a layer; 1: +1 %), Q4_K_M +1 % (1 only),
# new with BW24_STREAM_CONTIG=1 in between.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float gemv_float_multi
check_rows $SHA gemv_q8_streamed 'Q6_K'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:BF16 qwen3-8b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; row contig new $m tg128 "$A" BW24_STREAM_CONTIG=1; done
  row base base qwen3-30b-a3b:Q4_K_M tg128 "$A"; row new new qwen3-30b-a3b:Q4_K_M tg128 "$A"; done
echo "t=$(el)"
json $SHA 480 qwen3-8b:BF16 ""; json $SHA 480 qwen3-8b:Q4_K_M ""
echo "end t=$(el)"
