#!/bin/bash
# Prepared in round 52, not run (the session's device time was spent). Rows where flash decode's 3..8-split paths
# run: bw24-bench's tg test decodes from its depth (round 52), so `-d 512 -n 128` decodes positions 513-640 (five
# splits, the last CTA merging), where round 52's next286 / next288 rows (`-p 512`: positions 1-128) never did.
# Pack (clean trees):
#   git checkout wip/merge-once && tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check
#   git checkout wip/trigger-multi && tools/wip/pack-bins.sh multi HEAD bw24-bench
# Predictions: merge-once +0.3-1 % at -d 512 (one L2 round trip and a barrier a layer), MULTI 1 / 2 -0.5 to +1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-splits
for i in 1 2; do for m in 0 1; do
  row once$m new qwen3-8b:Q4_K_M tg128 "-p 0 -d 512 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m; done; done
for m in 0 1; do row once$m new qwen3-30b-a3b:Q4_K_M tg128 "-p 0 -d 512 -n 128 -r 2" BW24_FLASH_MERGE_ONCE=$m; done
for i in 1 2; do for m in 0 1 2; do
  row multi$m multi qwen3-8b:Q4_K_M tg128 "-p 0 -d 512 -n 128 -r 2" BW24_FLASH_TRIGGER_MULTI=$m; done; done
# round 51's open question: the late trigger after no pp test, 16 tokens or 512 (n_ctx 136, 136, 520), positions 1-128
for p in 0 16 512; do for l in 0 1; do
  row late$l-p$p new qwen3-8b:Q4_K_M tg128 "-p $p -n 128 -r 2" BW24_FLASH_LATE_TRIGGER=$l; done; done
echo "end t=$(el)"
