#!/bin/bash
# next295 (round 53): which split-kernel instance the head grouping picks, measured with main's bench (5c1fddc's device
# code) and its timing hook BW24_FLASH_HEAD_GROUPS (0 = the auto rule). Qwen3-30B-A3B at depth 4096 (G = 8, 4 KV
# heads, 4 x 37 = 148 CTAs at n_ctx 4,616: the auto rule keeps one group, so every CTA runs the generic instance with
# eight predicated heads; 2 groups take the four-head Qwen3 step instance with 296 CTAs). Qwen3-8B at positions
# 1,025-1,152 with n_ctx 1,160 (8 x 10 CTAs: auto = 2 groups, the generic instance; 4 = the one-head step instance).
# Pack: main's bench as base--bw24-bench.xz.
SHA=$1
source tools/wip/lib.sh
begin $SHA-groups
for i in 1 2; do for g in 0 2; do
  row 30b-d4096-g$g base qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_FLASH_HEAD_GROUPS=$g; done; done
row 30b-d4096-g4 base qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_FLASH_HEAD_GROUPS=4
for i in 1 2; do for g in 0 4; do
  row 8b-d1024-g$g base qwen3-8b:Q4_K_M tg128 "-p 0 -n 128 -d 1024 -r 2" BW24_FLASH_HEAD_GROUPS=$g; done; done
for g in 0 2; do row 8b-d4096-g$g base qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -d 4096 -r 2" BW24_FLASH_HEAD_GROUPS=$g; done
echo "end t=$(el)"
