#!/bin/bash
# next243 (run 2026-12-03): where next240's early-copy loss comes from. Branch wip/signal-gateup e0aee19 = wip/moe-all +
# BW24_SIGNAL_GATEUP=1 (the routed gate-up, after its PDL wait, signals the ids instead of the router: no fence on the
# router's critical path). Carry .carry with main fab0905's bench as base-- and e0aee19's as new--. tg128 of base,
# new with the early copies off (BW24_MOE_EARLY_IDS=0: fab0905's device path), new signalled by the gate-up; two rounds.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row base base $m tg128 "-p 16 -n 128 -r 2"
  row early-off new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_EARLY_IDS=0
  row signal-gateup new $m tg128 "-p 16 -n 128 -r 2" BW24_SIGNAL_GATEUP=1
done; done
echo "end t=$(el)"
