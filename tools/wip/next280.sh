#!/bin/bash
# Prepared in round 50, not run (the session's device time was spent). Pack from branch wip/gateup-wide (main's
# landed combine plus the switch), e.g. tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check
# tests/bw24_model_tests on that branch (clean tree; strip the programs before xz, round 50's carry note).
# next280 (round 51): the routed one-token Q4_K gate-up with two row groups a CTA sharing one staging of the token's
# row (BW24_GATEUP_WIDE=1: 384 CTAs of 16 warps for the 30B, two an SM at 64 registers, 0.96 MB of staging instead of
# 1.9 MB). The kernel check's routed Q4_K gate-up rows at 48 x 768 take it (rows % 16 == 0), bit-equal to the plain
# launches; its occupancy row holds the gate-up to 1,024 threads an SM.
# Prediction: 0 to +0.5 % (30B); the gate-up's staging is not queued behind cp.async weights as the combine's was.
SHA=$1
source tools/wip/lib.sh
begin $SHA-gateup-wide
export BW24_GATEUP_WIDE=1; kc $SHA moe
check_rows $SHA moe 'routed gemv'
check_rows $SHA moe 'moe decode occupancy'
grep 'moe decode occupancy' "$OUT/kc-moe-$SHA.txt"
gpu_tests $SHA; unset BW24_GATEUP_WIDE
for i in 1 2; do for g in 0 1; do
  row "wide$g" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATEUP_WIDE=$g; done; done
for g in 0 1; do row "wide$g" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_GATEUP_WIDE=$g; done
echo "end t=$(el)"
