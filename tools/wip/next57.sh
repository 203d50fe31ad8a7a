#!/bin/bash
# next57 (carry .carry only):  bash tools/wip/next57.sh <sha>  (timeout_s 470)
# new = wip/o-q8 (main a98a26a + flash decode writing O also as the O projection's int8 input: OutQ8, the rmsnorm_q8
# launch of every ungated attention layer goes); base = main a98a26a (gdn_decode landed).
# 1. Kernel check attention (both families: flash_decode + int8 O input bit-equal to flash_decode then rmsnorm_q8: single split,
#    inline merge, merge kernel, every cache pair), and attention_rope; GPU tests (fused_o_q8 off in the
#    fused-launches test: logits bit-identical).
# 2. Prediction: one boundary (~1.3-2 us) a layer: Qwen3-8B Q4_K_M 411 -> ~421 (+2-3 %), Q8_0 ~+2 %, Qwen3-30B-A3B
#    383 -> ~395; Qwen3.5-9B unchanged (gated attention keeps its launches).
# 3. JSON rows of new (8B Q4_K_M, 8B Q8_0, 30B) for the acceptance table, if it wins.
# Packing (here): on wip/o-q8 pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests libbw24.so.0; on main pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA attention  # attention and attention_rope (a substring match)
grep -c "int8 O input (bits).*ok" "$OUT/kc-attention-$SHA.txt"
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3-8b:Q8_0 tg128 "$P"; done; echo "t=$(el)"
for i in 1 2; do for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
row new new qwen3.5-9b:Q4_K_M tg128 "$P"; echo "t=$(el)"
for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3-30b-a3b:Q4_K_M; do [ $(el) -lt 340 ] &&
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/${m//:/-}-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
echo "end t=$(el)"
