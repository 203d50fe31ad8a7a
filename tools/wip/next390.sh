#!/bin/bash
# next390 (round 72): the depth-0 side in its landing form, on top of next389's. wip/land-bymat =
# wip/kv-ahead-land + one commit: where a gate-up's rows are whole 16-block pieces, a stage of its ring holds
# one matrix's 8 row pieces (kMatStage; at K = 4096 one contiguous 18.4 KB span) instead of both matrices' half pieces,
# the same bits; on by default, BW24_GATEUP_BYMAT=0 the A side. next387 measures the wip form of it (and next386's
# contiguity diagnostic) on a main without next389's change; this one measures what would land after next389.
# One binary, alternated (the L2 requests on in both, as they would be on main after next389 lands):
#  - Qwen3-8B Q4_K_M tg128 at depth 0 (three times), at depth 4096 (twice), q8_0 KV at both;
#  - the GPU tests and the acceptance JSONs (both changes on: these are the landing commit's if both win);
#  - the full kernel check, with its new rows: gemv_q8_gate_up_by_mat (bit-equal to the half pieces: Q4_K / Q5_K,
#    whole rows, two pieces a row, a partial group, a width without whole pieces, and the instance that writes its
#    int8 output), gemv_q8_norm_fold's folded gate-up in either form (bit-equal), next389's gemv_q8_l2_ahead;
#  - then Qwen3.5-9B at depth 0, the stage form alone (the L2 requests off) at depth 0, and both forms traced at
#    depth 0, as time allows.
# Arithmetic (round 71): a depth-0 saving s keeps the depth ratio only beside a depth-4096-only saving
# e >= 0.176 s - 1.7 us a step; next389 measures e. Prediction: none worth stating; round 71's SASS says 1,824 ->
# 1,920 instructions an item loop and ~46 % of shared-memory bandwidth, against a contiguous 18.4 KB copy a stage.
# Pack (from /work/main on wip/land-bymat, clean tree):
#   tools/wip/pack-bins.sh land2 HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests
#   .carry/trace as in next387. Run: bash tools/wip/next390.sh SHA, carrying .carry's rtlib, trace, stories260K
#   files and bins/land2.tar.xz.
SHA=$1
source tools/wip/lib.sh
begin $SHA-bymatland
D="-p 16 -n 128 -d 4096 -r 2" P="-p 512 -n 128 -r 2"
Q=qwen3-8b:Q4_K_M OFF=BW24_GATEUP_BYMAT=0
ab_switch 3 land2 $Q d0 "$P" $OFF
ab_switch 2 land2 $Q d4096 "$D" $OFF
ab_switch 1 land2 $Q q8-d0 "$P --kv q8_0" $OFF
ab_switch 1 land2 $Q q8-d4096 "$D --kv q8_0" $OFF
echo "rows t=$(el)"
rm -rf build-new && ln -s build-land2 build-new  # gpu_tests runs build-new's test programs
gpu_tests $SHA
JSON_BUILD=land2 json $SHA 300 $Q ""
JSON_BUILD=land2 json $SHA 320 $Q "-q8kv" --kv q8_0
# the full kernel check (both changes on, each form's rows checked against the other's): what lands must be all
# green, and next384's 2,765 rows were main's last full run
timeout 240 ./build-land2/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
grep -E "gate_up_by_mat|stages of one matrix|l2_ahead|L2 requests" "$OUT/kc-all-$SHA.txt" | head -24
if [ $(el) -lt 480 ]; then
  ab_switch 1 land2 qwen3.5-9b:Q4_K_M d0 "$P" $OFF
  ab_switch 1 land2 $Q nokv-d0 "$P" $OFF BW24_KV_AHEAD=0
fi
if [ $(el) -lt 520 ]; then
  TRACE_BUILD=land2 TRACE_POS=8 TRACE_LINES=12 trace_row off-d0 $Q "-p 16 -n 128 -r 1" $OFF
  TRACE_BUILD=land2 TRACE_POS=8 TRACE_LINES=12 trace_row on-d0 $Q "-p 16 -n 128 -r 1"
fi
echo "end t=$(el)"
