#!/bin/bash
# next37 (branch wip/prodq; carry .deps .carry):  bash tools/wip/next37.sh <sha>  (< 8 min)
# Before the call, here: rm -rf .carry/main-src && mkdir .carry/main-src && git archive main | tar -x -C .carry/main-src --exclude=tests/data
# 1. wip/prodq: the producers write the next GEMV's int8 input (flash decode -> O projection, streamed gate-up ->
#    down): two of the four rmsnorm_q8 launches of a dense layer's decode step go (RunnerOptions::producer_q8).
#    Kernel checks attention / gemv_q8_streamed / rmsnorm_q8 (the copies equal rmsnorm_q8's bytes), GPU tests
#    (the new one: logits bit-identical with producer_q8 off), tg128 rows beside main.
#    Prediction: -72 launches a Qwen3-8B step (~1.5-2.5 us each in the graph): tg128 389 -> ~405-415; the 9B
#    (MLP only: its attention is gated) and the 30B (attention only) about half of that.
# (The flash decode variants: next38.)
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA attention gemv_q8_streamed rmsnorm_q8
gpu_tests $SHA; grep -E "int8 inputs|FAILED" "$OUT/gpu-vs-cpu-$SHA.txt" | head -5
P="-p 16 -n 128 -r 3 -d 0,4096"
row main main qwen3-8b:Q4_K_M tg128 "$P"; row new new qwen3-8b:Q4_K_M tg128 "$P"
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do row main main $m tg128 "$P"; row new new $m tg128 "$P"; done
row main main qwen3-8b:Q4_K_M tg128 "$P"; row new new qwen3-8b:Q4_K_M tg128 "$P"
echo "rows t=$(el)"
[ $(el) -lt 500 ] && timeout 80 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
