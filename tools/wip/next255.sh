#!/bin/bash
# next255 (round 45): the O projection folded into flash decode (branch wip/fold-o; cuda::FoldO, rmsnorm_q8_parts,
# the step graph's regime 2 below position 128; BW24_FOLD_O=0 for A/B, BW24_FOLD_ROWS the W_o rows a CTA).
#   bash tools/wip/next255.sh SHA check -- carry .carry (new--: kernel check, model tests, libbw24, bw24-generate,
#     bw24-synth, bw24-bench): kernel check attention_rope (the "WIP" rows), model tests [gpu], a synthetic Qwen3-8B
#     Q4_K_M's greedy ids with the fold off and on, then the A/B
# Prediction: the O launch's 4.1 us segment a Qwen3-8B layer goes for ~0.5 us of products in flash decode and ~0.7 us
# more norm: +1.5-2.5 us a layer, +3-5 % tg128.
SHA=$1
source tools/wip/lib.sh
begin $SHA-$2
kc_one $SHA attention_rope
check_rows $SHA attention_rope 'WIP'
grep "WIP" "$OUT/kc-attention_rope-$SHA.txt" | head -8
timeout 100 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1
echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 120 ./build-new/bw24-synth qwen3-8b Q4_K_M /tmp/q8b.gguf > /tmp/synth.log 2>&1; echo "synth rc=$? t=$(el)"
for f in 0 1; do
  BW24_FOLD_O=$f timeout 60 ./build-new/bw24-generate -m /tmp/q8b.gguf --prompt-ids 1,2,3,4,5 -n 100 --device cuda --json \
    2>&1 | grep -o '"ids":\[[^]]*\]' | md5sum | sed "s/^/fold=$f ids /"
  BW24_FOLD_O=$f timeout 60 ./build-new/bw24-generate -m /tmp/q8b.gguf --prompt-ids 1,2,3,4,5 -n 100 --device cuda --json \
    2>&1 | grep -o '"ids":\[[^]]*\]' | cut -c1-200
done
echo "generate t=$(el)"
for i in 1 2; do
  row fold0 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_FOLD_O=0
  row fold new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
  row fold512 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3" BW24_FOLD_ROWS=512
done
echo "end t=$(el)"
