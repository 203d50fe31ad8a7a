#!/bin/bash
# Correction (round 52): bw24-bench's tg rows decode at positions 1-128 whatever -p is, not at 512-639, so the
# 3..8-split paths named below never ran in these rows (docs/performance.md, round 52; next291 uses -d 512).
# next288 (round 52): wip/merge-once. The split kernel's inline merge (3..8 visible splits: positions 256-1023, the
# acceptance command's tg128 at 512-639) waited two L2 round trips and a barrier: every head's (m, l), then its rows.
# BW24_FLASH_MERGE_ONCE=1 loads both at once in every warp (the same expressions: the same bits). Kernel check
# attention / attention_rope with the switch on and off, their rows diffed (the errors must be equal), then tg128
# A/B at -p 512. Prediction: one round trip (~0.6 us) a layer: Qwen3-8B +1 %, Qwen3-30B-A3B +1.5 % at -p 512.
# Then the GPU model tests and the acceptance JSON (8B, 30B) of the branch's binary (the switch on, its default).
# Pack (on wip/merge-once, clean tree): tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-merge-once
BW24_FLASH_MERGE_ONCE=1 kc_one $SHA attention attention_rope
BW24_FLASH_MERGE_ONCE=0 kc_one $SHA-off attention attention_rope
strip_t() { sed -E 's/[0-9.]+ (us|ms)//g' "$1"; }
echo "kc rows differing on/off: $(diff <(strip_t $OUT/kc-attention-$SHA.txt) <(strip_t $OUT/kc-attention-$SHA-off.txt) | grep -c '^<')"
diff <(strip_t $OUT/kc-attention-$SHA.txt) <(strip_t $OUT/kc-attention-$SHA-off.txt) | head -8
for i in 1 2; do for m in 0 1; do
  row once$m new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m
  row once$m new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m; done; done
for m in 0 1; do for s in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row once$m new $s tg128 "-p 512 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m; done; done
for m in 0 1; do row once$m-p16 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m; done
gpu_tests $SHA
json $SHA 470 qwen3-8b:Q4_K_M ""
json $SHA 520 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
