#!/bin/bash
# next267 (round 48): the routed Q4_K gate-up copying its predicted experts' rows into shared memory before the PDL
# wait (branch wip/gate-up-early, BW24_GATE_UP_EARLY=1 / 2 row pairs a warp; 0 = main's routed gate-up, the same
# binary). The prediction is the layer's picks of the previous step (written by the combine). Carry .carry with
# new--bw24-bench and new--bw24-kernel-check.
# Rows: the moe kernel-check family (early gate-up bit-equal to the routed gate-up for six predictions); tg128 of both
# MoE shapes in the three modes, two rounds; then BW24_GRAPH_REPLAYS=4, where every replay after the first repeats the
# step's token and position, so its prediction is right: (1/tok_s(4) - 1/tok_s(1)) / 3 is a step with right
# predictions. Prediction: with the previous token's picks on random synthetic weights few predictions hit, so
# EARLY=1/2 read about main (the miss path is main's load after the wait, plus the early copies' traffic); with right
# predictions the gate-up's 7.5 us segment falls toward ~3 us (its data in shared memory at the wait): 30B step
# -1.5 to -4 us a layer.
SHA=$1
source tools/wip/lib.sh
begin $SHA-gate-up-early
kc $SHA moe
check_rows $SHA moe 'gemv_q8_gate_up_early'
check_rows $SHA moe 'pred_out'
for i in 1 2; do for e in 0 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row "early$e" new $m tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=$e; done; done; done
for e in 0 2 1; do for rp in 4 1; do
  row "early$e-replays$rp" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 64 -r 2" BW24_GATE_UP_EARLY=$e BW24_GRAPH_REPLAYS=$rp; done; done
for e in 0 2; do row "early$e-replays4" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 64 -r 2" BW24_GATE_UP_EARLY=$e BW24_GRAPH_REPLAYS=4; done
row "early2-d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_GATE_UP_EARLY=2
row "early0-d4096" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_GATE_UP_EARLY=0
[ $(el) -lt 380 ] && TRACE_POS=10 trace_row 30b-early2-replays4 qwen3-30b-a3b:Q4_K_M "-p 16 -n 64 -r 1" BW24_GATE_UP_EARLY=2 BW24_GRAPH_REPLAYS=4
echo "end t=$(el)"
