#!/bin/bash
# next338 (round 60): wip/q4k3-async: the quantizing combine's Q4_K rows of 3-4 blocks (the 30B's 768-wide downs)
# by cp.async (BW24_COMBINE_Q4K3=1), so their weight copies go out before the f32 rows are quantized (next337's
# trace: the Q4_K register-load combine gained ~0.05 us a layer from the fold, the Q6_K cp.async one ~0.5).
# Kernel check moe, then one binary alternated: the 30B (two rounds) and at depth 4096, the 35B.
# Pack: bash tools/wip/pack-bins.sh q4k3 HEAD bw24-bench bw24-kernel-check (on wip/q4k3-async).
SHA=$1
source tools/wip/lib.sh
begin $SHA-q4k3
KC_BUILD=q4k3 kc $SHA moe; grep "48 x 768" "$OUT/kc-moe-$SHA.txt" | grep "Q4_K" | grep -c "quantized in the launch"
grep "48 x 768" "$OUT/kc-moe-$SHA.txt" | grep "Q4_K" | grep "quantized in the launch" | head -2
for i in 1 2; do for v in 0 1; do row q4k3=$v q4k3 qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_Q4K3=$v; done; done
for v in 0 1; do row d4096-q4k3=$v q4k3 qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_COMBINE_Q4K3=$v; done
for v in 0 1; do row q4k3=$v q4k3 qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_COMBINE_Q4K3=$v; done
echo "end t=$(el)"
