#!/bin/bash
# next389 (round 72): the landing form of next388's candidate, measured as it would land. wip/kv-ahead-land (one
# commit on main): the decode step's Q + K launch requests the layer's K and V history rows into L2 after its PDL wait
# (cuda::L2Ahead, the kernel's kL2Ahead instances: six, Q4_K / Q5_K pieces of 16, stores of several segments), rows
# [p - max_rows, p) with max_rows half the L2; on by default, BW24_KV_AHEAD=0 the A side. One binary, alternated:
#  - Qwen3-8B Q4_K_M tg128 at depth 4096 (f16 three times, q8_0), at depth 0 (f16 twice, q8_0);
#  - the kernel checks it adds or touches (gemv_q8_l2_ahead; gemv_q8_norm_fold's folded Q + K with the requests;
#    attention, whose q8_0 / q4_0 cache readers now take their planes from kv_planes), the GPU tests;
#  - the acceptance JSONs (on by default: they are the landing commit's if it wins);
#  - then Qwen3-30B-A3B (4096, 0), Qwen3.5-9B (4096), and both sides traced at depth 4096, as time allows.
# Prediction (round 71): depth 4096 549.6 -> ~577 (ratio ~89 %), depth 0 unchanged; the trace shows the split kernel's
# segment falling toward depth 0's 4.90 us and the Q + K instance as gemv_stream_kernel<KQuantStream<false, 16>,
# (GemvOut)0, (StreamCut)1, 42> (kFoldNormIn | kShortAct | kL2Ahead).
# Pack (from /work/main on wip/kv-ahead-land, clean tree):
#   tools/wip/pack-bins.sh land HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
#   .carry/trace as in next387. Run: bash tools/wip/next389.sh SHA, carrying .carry's rtlib, trace, stories260K files
#   and bins/land.tar.xz (next387's pack is another 10.6 MB: carry one pack a call).
SHA=$1
source tools/wip/lib.sh
begin $SHA-kvland
D="-p 16 -n 128 -d 4096 -r 2" P="-p 512 -n 128 -r 2"
Q=qwen3-8b:Q4_K_M OFF=BW24_KV_AHEAD=0
ab_switch 3 land $Q d4096 "$D" $OFF
ab_switch 1 land $Q q8-d4096 "$D --kv q8_0" $OFF
ab_switch 2 land $Q d0 "$P" $OFF
ab_switch 1 land $Q q8-d0 "$P --kv q8_0" $OFF
echo "rows t=$(el)"
KC_BUILD=land kc_one $SHA gemv_q8_l2_ahead gemv_q8_norm_fold attention
rm -rf build-new && ln -s build-land build-new  # gpu_tests runs build-new's test programs
gpu_tests $SHA
JSON_BUILD=land json $SHA 420 $Q ""
JSON_BUILD=land json $SHA 450 $Q "-q8kv" --kv q8_0
if [ $(el) -lt 470 ]; then
  ab_switch 1 land qwen3-30b-a3b:Q4_K_M d4096 "$D" $OFF
  ab_switch 1 land qwen3-30b-a3b:Q4_K_M d0 "$P" $OFF
  ab_switch 1 land qwen3.5-9b:Q4_K_M d4096 "$D" $OFF
fi
if [ $(el) -lt 510 ]; then
  TRACE_BUILD=land TRACE_POS=8 TRACE_LINES=12 trace_row off-d4096 $Q "-p 16 -n 128 -d 4096 -r 1" $OFF
  TRACE_BUILD=land TRACE_POS=8 TRACE_LINES=12 trace_row on-d4096 $Q "-p 16 -n 128 -d 4096 -r 1"
fi
echo "end t=$(el)"
