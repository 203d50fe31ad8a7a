#!/bin/bash
# next244 (run 2026-12-03): next243 again without its spill. Branch wip/signal-gateup e371e50 (tools/wip/patches/signal-gateup.patch, on wip/moe-all): the routed
# gate-up's CTA (0, 0) signals the ids at its end (BW24_SIGNAL_GATEUP=1) instead of the router. Carry .carry with main
# fab0905's bench as base-- and the branch's as new--, and .carry/trace. tg128 of base, new with the early copies off
# (BW24_MOE_EARLY_IDS=0: fab0905's device path), new signalled by the gate-up, two rounds (the early-off control in the first only); then base's 30B step traced.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row base base $m tg128 "-p 16 -n 128 -r 2"
  [ $i = 1 ] && row early-off new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_EARLY_IDS=0
  row signal-gateup new $m tg128 "-p 16 -n 128 -r 2" BW24_SIGNAL_GATEUP=1
done; done
echo "rows t=$(el)"
[ $(el) -lt 250 ] && TRACE_BUILD=base TRACE_LAYER_ROWS=24 TRACE_LINES=16 TRACE_POS=12 trace_row 30b-fab0905 qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1"
echo "end t=$(el)"
