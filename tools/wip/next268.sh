#!/bin/bash
# next268 (round 48): next267's early gate-up with right predictions, two ways. (1) BW24_ABLATE=moegate leaves the
# router out, so the routes stay those of the prompt's last MoE layer and the combine's prediction is right from the
# second step on: EARLY=0 against EARLY=1 / 2 there is the gain of a right prediction after the block's norm launch
# (~1.5 us of lead instead of the router's ~4 us: a lower bound). BW24_GATE_UP_EARLY_SKEW=s makes s of the 8 picks
# wrong. (2) BW24_GRAPH_REPLAYS=4: each decode call replays the step 4 times at the same token and position, so
# replays 2-4 find last replay's picks, right, with the router in place: step = (1/tok_s(4) - 1/tok_s(1)) / 3.
# (next267's replay rows ran but printed nothing: -n 64 is a tg64 row.) The misses now take the routed launch's
# loads at once (next267 waited for the wrong copies first).
# Prediction: right picks -3 to -4 us a layer (30B ablated tg128 +8-12 %); one miss a layer keeps half of that.
SHA=$1
source tools/wip/lib.sh
begin $SHA-gate-up-early-right
kc $SHA moe
check_rows $SHA moe 'gemv_q8_gate_up_early'
for i in 1 2; do for e in 0 2; do
  row "ablated-early$e" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=$e BW24_ABLATE=moegate; done; done
for e in 0 2; do
  row "early$e-replays4" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=$e BW24_GRAPH_REPLAYS=4; done
for s in 1 2; do
  row "ablated-early2-skew$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=2 BW24_ABLATE=moegate BW24_GATE_UP_EARLY_SKEW=$s; done
row "ablated-early1" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=1 BW24_ABLATE=moegate
for e in 0 2; do row "early$e" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=$e; done
for e in 0 2; do
  row "ablated-early$e" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATE_UP_EARLY=$e BW24_ABLATE=moegate; done
echo "end t=$(el)"
