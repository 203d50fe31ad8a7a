#!/bin/bash
# Packed here (branch wip/norm-solo b505261, build-pack/dev): bw24-bench, tests/bw24_model_tests, tests/bw24_gpu_vs_cpu_tests,
# libbw24.so.0 into .carry/bins/new--*.xz (xz -T2 -6); carry [".carry"].
# next269 (round 49): wip/norm-solo. Round 31 measured that a streamed GEMV's early copies (issued before its PDL
# wait) cost the latency-bound rmsnorm_q8 before it ~1.5 us (the 8B's norms 3.0 us a launch, 109 a step, 18.8 % of
# the step; 1.6-2.0 us with no early copies), and placed the cost in the SMs' inbound path, not in L2 or DRAM.
# If it is the norm's own SMs: rmsnorm_q8's CTAs hold a word per SM while resident, and the streamed GEMV after the
# norm issues only BW24_NORM_SOLO_PRE stages before its wait on those SMs (16 of 132 for the 16-CTA norms, 48 for the
# 8B's int8 launch before the down). BW24_NORM_SOLO bit 0: the normed launches, bit 1: the plain int8 ones.
# Prediction: the 8B's norms -0.8 to -1.2 us each, the GEMVs after them +0.2-0.4 us: tg128 +3-5 %; the 30B +0.5-1 %
# (its attention norm only). If the cost is not the norm's SM's, no gain and a small loss (the word's read).
SHA=$1
source tools/wip/lib.sh
begin $SHA-norm-solo
BW24_NORM_SOLO=3 gpu_tests $SHA
for i in 1 2; do
  row "solo0" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=0
  row "solo1" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=1
  row "solo3" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=3
  row "solo3-pre1" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=3 BW24_NORM_SOLO_PRE=1
done
row "solo2" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=2
row "solo1-pre1" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=1 BW24_NORM_SOLO_PRE=1
echo "8b t=$(el)"
for s in 0 1; do row "solo$s" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=$s; done
for s in 0 3; do row "solo$s" new qwen3.5-9b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_NORM_SOLO=$s; done
for s in 0 3; do row "solo$s-d4096" new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_NORM_SOLO=$s; done
echo "rows t=$(el)"
[ $(el) -lt 330 ] && TRACE_POS=12 trace_row 8b-solo0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_NORM_SOLO=0
[ $(el) -lt 420 ] && TRACE_POS=12 trace_row 8b-solo3 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_NORM_SOLO=3
echo "end t=$(el)"
