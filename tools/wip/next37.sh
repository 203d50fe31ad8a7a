#!/bin/bash
# next37 (branch wip/rope-fuse = wip/prodq + the fused RoPE; carry .deps .carry):  bash tools/wip/next37.sh <sha>  (< 9 min)
# Before the call, here:  for b in main:main-src wip/prodq:prodq-src; do d=.carry/${b#*:}; rm -rf $d && mkdir -p $d &&
#   git archive ${b%:*} | tar -x -C $d --exclude=tests/data; done
# Two decode folds, each a kernel boundary fewer a layer, checked and measured beside main:
#  prodq (wip/prodq): the producers write the next GEMV's int8 input (flash decode -> O projection, streamed gate-up
#    -> down): two of the four rmsnorm_q8 launches of a dense layer's step go (RunnerOptions::producer_q8).
#  new (wip/rope-fuse): + flash decode does qk_rope_store's work for one token (RunnerOptions::fused_rope).
# Kernel checks attention (+ attention_rope: fused vs the two launches, bit-equal), gemv_q8_streamed, rmsnorm_q8,
# qk_rope; GPU tests (the new one: logits bit-identical with both folds off); tg128 rows main / prodq / new.
# Predictions (each boundary ~1.5-2.5 us of a 71 us Qwen3-8B layer): prodq tg128 389 -> ~405-415, new -> ~420-430;
# the 9B (gated attention: MLP fold and RoPE fold) and the 30B (attention folds) less.
SHA=$1
source tools/wip/lib.sh
cfg .carry/prodq-src build-prodq prodq -DBW24_TESTS=OFF
( ninja -C build-prodq -j6 bw24-bench > /tmp/b-prodq.log 2>&1 || grep -A3 error /tmp/b-prodq.log | head ) &
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
wait; echo "all built t=$(el)"
kc $SHA attention gemv_q8_streamed rmsnorm_q8 qk_rope
gpu_tests $SHA; grep -E "fused producers|FAILED" "$OUT/gpu-tests-$SHA.txt" | head -5
P="-p 16 -n 128 -r 3 -d 0,4096"
for b in main prodq new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for b in main prodq new; do row $b $b $m tg128 "$P"; done; done
for b in main prodq new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done
echo "rows t=$(el)"
[ $(el) -lt 500 ] && timeout 80 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
