#!/bin/bash
# next113 (carry .carry only): bash tools/wip/next113.sh SHA  (timeout 560)
# new = wip/combine-early SHA (on wip/act-once 90c27ee), packed from its clean HEAD; base = wip/act-once's bench (or
# main's, once act-once has landed).
# One change, in the routed down projection that adds its pairs into the residual (gemv_q8_combine_kernel, one a MoE
# layer): the pair's expert id and the epilogue's inputs (residual, shared-expert output and gate, routing weights) are
# read right after the PDL wait, beside the activation staging, not after it (the id) and after the sums (the
# epilogue's): two L2 round trips off the end of every MoE layer. Same values, same operations (same bits; kernel
# check 'moe' compares it with the routed store launch + moe_combine bit for bit). Registers 64 as before, stack
# unchanged (Q6_K 40, IQ4_XS 64 bytes).
# Prediction: ~0.8 us a MoE layer, Qwen3-30B-A3B (48 layers) 1.98 -> ~1.94 ms, +2 %; Qwen3.6-35B-A3B alike; dense
# models unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA moe gemv_q8
check_rows $SHA moe 'combine'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
row base base qwen3-8b:Q4_K_M tg128 "$A"; row new new qwen3-8b:Q4_K_M tg128 "$A"
echo "t=$(el)"
json $SHA 460 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
