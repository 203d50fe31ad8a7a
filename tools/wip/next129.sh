#!/bin/bash
# next129 (carry .carry only): bash tools/wip/next129.sh SHA  (timeout 590). wip/q6k-tiles: Q6_K planes cut by tiles
# of a row piece (cuda/common/q6k_tiles.cuh); every Q6_K reader (streamed and warp-per-row GEMV, expansion, fused and
# int8 grouped GEMMs) takes its offsets from it. Packed: new = SHA's five programs (clean HEAD), main = b1dbe9d's bench.
# Prediction (next127's d3, the same reads): tg128 Qwen3.5-9B +2.7 %, Qwen3-30B-A3B +4 %, Qwen3-8B Q4_K_M +0.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed dequant gemm
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  [ $(el) -lt 470 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do [ $(el) -lt 480 ] && row $b $b qwen3-8b:Q6_K tg128 "-p 16 -n 128 -r 3"; done
for b in main new; do [ $(el) -lt 490 ] && row $b $b qwen3-8b:Q4_K_M pp512 "-p 512 -n 0 -r 2"; done
[ $(el) -lt 500 ] && kc $SHA moe
echo "end t=$(el)"
