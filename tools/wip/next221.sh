#!/bin/bash
# next221 (round 38; carry .carry: bench + kernel check of wip/gate-norm2, .carry/trace): bash tools/wip/next221.sh SHA --
# the MoE block's input norm folded into the cluster router (MoeGateNorm). The moe family's "moe_gate norm" rows
# (fused against rmsnorm_q8 + the cluster router, bit for bit), then one binary A/B, BW24_GATE_NORM=0 = main's
# launches, and a trace of the 30B step with the fold on and off.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'moe_gate norm'
grep "moe_gate norm" $OUT/kc-moe-$SHA.txt
for i in 1 2; do for s in 0 1; do
  row "gate_norm=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_GATE_NORM=$s
  row "gate_norm=$s" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_GATE_NORM=$s; done; done
for s in 0 1; do row "gate_norm=$s d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_GATE_NORM=$s; done
TRACE_POS=12 trace_row 30b-norm1 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_GATE_NORM=1
TRACE_POS=12 trace_row 30b-norm0 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1" BW24_GATE_NORM=0
echo "end t=$(el)"
