#!/bin/bash
# Prepared in round 49, not run (the session's device time was spent). Pack from branch wip/combine-four (its tip
# holds main's landed combine plus the four-group switch), e.g. tools/wip/pack-bins.sh new HEAD bw24-bench
# bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests on that branch (clean tree); carry [".carry"]
# without .carry/trace if the 64 MiB do not hold it (the trace rows below then print nothing).
# next274 (round 50): (1) main's landed combine checked: kernel check moe with its new passes (cp.async / register,
# two / one row groups) and the occupancy row, the GPU tests; (2) four row groups a CTA (BW24_COMBINE_GROUPS=4: 32 warps,
# 128 CTAs for the 30B, one an SM) against main's two: kernel check moe with it (the 48 x 768 rows take four groups),
# tg128 A/B; (3) the 30B traced with the default.
# Prediction for (2): the staging share halves again (2.0 -> 1.0 MB), but one CTA an SM leaves 4 of 132 SMs idle and a
# CTA's 32 warps wait on one barrier: 30B tg128 -0.5 to +0.8 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-combine-four
kc $SHA moe
check_rows $SHA moe 'moe down + combine'
check_rows $SHA moe 'moe decode occupancy'
gpu_tests $SHA
export BW24_COMBINE_GROUPS=4; cp "$OUT/kc-moe-$SHA.txt" "$OUT/kc-moe-$SHA-two.txt"; kc $SHA moe; unset BW24_COMBINE_GROUPS
check_rows $SHA moe 'moe down + combine'
for i in 1 2; do for g in 2 4; do
  row "groups$g" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_GROUPS=$g; done; done
for g in 2 4; do row "groups$g" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_GROUPS=$g; done
row "one-group" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_COMBINE_WIDE=0
echo "rows t=$(el)"
[ -d .carry/trace ] && [ $(el) -lt 400 ] && TRACE_POS=10 trace_row 30b-main qwen3-30b-a3b:Q4_K_M "-p 16 -n 128 -r 1"
echo "end t=$(el)"
