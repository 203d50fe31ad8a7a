#!/bin/bash
# next158 (carry .carry only): bash tools/wip/next158.sh SHA  (timeout 560) -- round 28: the streamed GEMV's consumer loop
# in a second copy for uniform launches (branch wip/uniform-items 2cf5178: one segment, whole row groups and pieces; the
# item's segment choice and bounds as constants: the Q4_K store instance's loop ~295 -> ~255 instructions an item, SASS).
# base = main 01be39b's bench (the value row with the key row), new = the branch's bench and kernel check; the landed
# tip's GPU-vs-CPU tests (base--tests+bw24_gpu_vs_cpu_tests.xz, 01be39b) and its acceptance JSON (Qwen3-8B Q4_K_M).
# Pack: tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check (on the branch); base = 01be39b's pack.
# Expect: kernel check gemv_q8_streamed / gemv_q8_multi / gemv_float* all ok, the streamed rows' errors as next155's
# (same bits). Prediction: GEMV launches -1-3 %, Qwen3-8B Q4_K_M tg128 +0.5-2 %, BF16 +0-1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float
timeout 120 ./build-base/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-01be39b.txt" 2>&1
echo "GPU vs CPU (01be39b) rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" "$OUT/gpu-vs-cpu-01be39b.txt" | head -3
for i in 1 2; do for b in base new; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  [ $(el) -lt 380 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in base new; do [ $(el) -lt 440 ] && row $b $b qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2"; done
JSON_BUILD=base json 01be39b 500 qwen3-8b:Q4_K_M ""
echo "end t=$(el)"
