#!/bin/bash
# next296 (round 53): wip/four-head-groups (749f362): flash decode's auto head grouping starts at four-head CTAs where
# a KV head's group is larger (G = 8: Qwen3-30B-A3B, Qwen3-32B), past two CTAs an SM if need be. next295 measured it
# on the 30B at depth 4096 with the timing hook (groups 2: 528.5 / 527.9 -> 548.1 / 547.8). Here the branch's rule
# (BW24_FLASH_HEAD_GROUPS unset) against the old rule's choice (=1) where they differ: the 30B at depth 4096 and
# 8192, Qwen3-32B (new synthetic shape, 8 KV heads: 272 CTAs at groups 1, 544 at 2) at 4096; the 30B's acceptance
# JSON; the attention kernel check (head-group bit rows) and the GPU model tests.
# Pack (branch, clean tree): tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
SHA=$1
source tools/wip/lib.sh
begin $SHA-four-head
kc_one $SHA attention attention_rope
check_rows $SHA attention 'head groups'
timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1
echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
row 30b-d4096-old new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_FLASH_HEAD_GROUPS=1
for g in 1 0; do row 30b-d8192-g$g new qwen3-30b-a3b:Q4_K_M tg128 "-p 0 -n 128 -d 8192 -r 2" BW24_FLASH_HEAD_GROUPS=$g; done
for g in 1 0; do row 32b-d4096-g$g new qwen3-32b:Q4_K_M tg128 "-p 0 -n 128 -d 4096 -r 2" BW24_FLASH_HEAD_GROUPS=$g; done
echo "end t=$(el)"
