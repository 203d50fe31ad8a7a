#!/bin/bash
# next66 (carry .carry only):  bash tools/wip/next66.sh <sha>  (< 5 min; timeout_s 330)
# new = wip/cta-route (main f5f8e2c + moe_gate's last CTA routing a one-token pass with the whole CTA, an expert a
# thread: block max and sum, then each thread counts the experts that beat its own, and that count is its pick's
# place; warp_route's 8 rounds of a warp argmax, ~220 cycles each, leave the router's tail); base = main.
# Patch: tools/wip/patches/cta-route.patch (git am onto main). Run it only if next65's route-in-launch loses: its
# variant C already carries this commit and puts cta_route in the gate-up's route kernel as well.
# 1. Kernel check moe (moe_gate: ids exact against route_ref, one token of 128 experts with a tie for the first pick,
#    twice on one counter; 512 experts and several tokens keep warp_route), GPU tests.
# 2. Prediction: ~0.7 us of a MoE layer's ~5.7 us router: Qwen3-30B-A3B 416 -> ~422 (+1.3 %), Qwen3.6-35B-A3B
#    (256 experts: 8 experts a lane each round) 398 -> ~405.
# Packing (here): on wip/cta-route rm -f .carry/bins/* && pack-bins.sh new HEAD bw24-bench bw24-kernel-check
#   tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests libbw24.so.0; on main pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
grep -E "moe_gate" "$OUT/kc-moe-$SHA.txt" | head -8
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new; do [ $(el) -lt 250 ] && row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "end t=$(el)"
