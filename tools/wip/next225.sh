#!/bin/bash
# next225 (round 38; carry .carry: bench, kernel check and GPU tests of wip/gateup-heads 301c670, tools/wip/patches/gate-up-async.patch): bash tools/wip/next225.sh SHA
# -- the routed Q4_K gate-up in one wave: six CTAs an SM (40 registers, no spills) with its weight bytes copied into
# shared memory (cp.async) instead of held in registers, taken where four an SM need more than one wave (Qwen3-30B-A3B:
# 768 CTAs). The moe family's new "routed gemv one wave" rows (bit-equal to the plain kernel, the kernel taken), the
# GPU tests, one binary A/B (BW24_GATE_UP_ONE_WAVE=0 = four an SM), the 30B's acceptance row.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'routed gemv one wave'
grep "one wave" $OUT/kc-moe-$SHA.txt
gpu_tests $SHA
for i in 1 2; do for s in 0 1; do
  row "one_wave=$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_GATE_UP_ONE_WAVE=$s; done; done
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
