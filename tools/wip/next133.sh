#!/bin/bash
# next133 (carry .carry only): bash tools/wip/next133.sh SHA  (timeout 560) -- prepared in round 23, not run.
# Q8_0's planes cut by tiles as Q6_K's (tools/wip/patches/q80-tiles.patch on main; branch wip/q80-tiles 6d7cb80): a
# streamed Q8_0 row piece (16 of the kernel's 256-weight blocks: qs 4,096 B and d 256 B) becomes one copy, 8 copies a
# stage instead of 16; the warp-per-row Q8_0 and the bf16 expansion read the tiles (Q80Tiles, cuda/common/q6k_tiles.cuh).
# Why: round 23 found the Q6_K stream starved by its small copies (32 a stage, of 32 and 256 bytes among them); Q8_0's
# stages hold 8 copies of 256 bytes. Against it: next128's one copy a stage cost Qwen3-8B Q8_0 4 % (411 -> 394).
# Prediction: Qwen3-8B Q8_0 and Qwen3.5-9B Q8_0 tg128 +1-3 %, the Q4_K_M rows unchanged (their Q6_K path is the same
# reads, written generically), Qwen3-0.6B Q8_0 (K = 1024, 3072: one tile a tensor) unchanged.
# The same build also carries a timing hook, BW24_STREAM_ALL_SLOTS=1 (drop it before landing): one-matrix streamed
# launches whose rows take more than one piece (the K = 12,288 downs) take every slot instead of as few CTAs as keep
# the most row groups a CTA takes (Qwen3-8B Q4_K down: 396 CTAs, 116 of two groups, instead of 256 of two). Round 23's
# serialized step put the downs at 13.1 / 17.3 us for 28.3 / 41.3 MB (2.2-2.4 TB/s), the largest gap among the big
# launches. Prediction: the downs' first fill has half again the stages in flight; +1-2 % on Qwen3-8B / Qwen3.5-9B
# Q4_K_M if the fill is the bound, nothing if the consumers are.
# Pack first (.carry may already hold them from round 23; check the SHA in the names' build):
#   git checkout -b wip/q80-tiles main && git apply tools/wip/patches/q80-tiles.patch && git commit -qam q80-tiles &&
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check libbw24.so.0 tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests &&
#   git checkout main && tools/wip/pack-bins.sh main HEAD bw24-bench
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed dequant gemm moe
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q8_0 qwen3.5-9b:Q8_0 qwen3-8b:Q4_K_M; do
  [ $(el) -lt 420 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-8b:Q8_0; do
  [ $(el) -lt 430 ] && row new-all-slots new $m tg128 "-p 16 -n 128 -r 3" BW24_STREAM_ALL_SLOTS=1; done; done
for b in main new; do [ $(el) -lt 440 ] && row $b $b qwen3-0.6b:Q8_0 tg128 "-p 16 -n 128 -r 3"; done
for b in main new; do [ $(el) -lt 450 ] && row $b $b qwen3-8b:Q8_0 pp512 "-p 512 -n 0 -r 2"; done
[ $(el) -lt 460 ] && kc $SHA gemv_q8
echo "end t=$(el)"
