#!/bin/bash
# next290 (round 52): wip/step-buckets. bw24-bench's tg128 runs at positions 1-128 whatever -p is (each test starts
# from an empty context at its depth), with n_ctx = max depth + max(p, n) + 8: 520 for `-p 512 -n 128`, 4,616 for the
# acceptance command (-d 0,4096). The one-token graph below position 1,024 was captured once with max_pos 1,023, so
# flash decode's grid held min(8, n_ctx's) splits: at positions below 128, 160 (n_ctx 520) or 256 (4,616) split CTAs a
# Qwen3-8B layer where 32 have keys; the rest read the position and return. BW24_STEP_BUCKETS=1 captures a graph per
# 128-position split, whose grid stops at its split. Same bits (the grouping follows the grid; no arithmetic moves).
# Prediction: Qwen3-8B +0.5-1.5 % at n_ctx 520 and 4,616 (round 51: -p 16, n_ctx 136, read 595.7 against 589.2 at -p
# 512 in one binary), Qwen3-30B-A3B +0-1 %.
# Pack (on wip/step-buckets, clean tree): tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-step-buckets
timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1
echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
for i in 1 2; do for b in 0 1; do
  row buckets$b new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -d 0,4096 -r 2" BW24_STEP_BUCKETS=$b; done; done
for b in 0 1; do row buckets$b new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_STEP_BUCKETS=$b; done
echo "end t=$(el)"
