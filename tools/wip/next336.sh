#!/bin/bash
# next336 (round 60): wip/down-quant: the MoE down + combine quantizes the gate-up's f32 rows itself
# (MoeCombine::act), so the int8 launch between them goes. Kernel check moe (the fold's rows bit-equal to the
# separate launches), then one binary with BW24_COMBINE_QUANT=0/1 alternated: the 30B (two rounds), the 35B, the
# 30B at depth 4096. Pack: bash tools/wip/pack-bins.sh quant HEAD bw24-bench bw24-kernel-check (on wip/down-quant).
SHA=$1
source tools/wip/lib.sh
begin $SHA-down-quant
KC_BUILD=quant kc $SHA moe; grep -c "quantized in the launch" "$OUT/kc-moe-$SHA.txt"; grep "quantized in the launch" "$OUT/kc-moe-$SHA.txt" | head -4
for i in 1 2; do for v in 0 1; do row q=$v quant qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_QUANT=$v; done; done
for v in 0 1; do row q=$v quant qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_QUANT=$v; done
for v in 0 1; do row d4096-q=$v quant qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_COMBINE_QUANT=$v; done
echo "end t=$(el)"
