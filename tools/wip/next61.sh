#!/bin/bash
# next61 (carry .carry only):  bash tools/wip/next61.sh <sha>  (< 6 min; timeout_s 400)
# new = wip/gated-fold (main 1d69a38 + tools/wip/patches/gated-fold.patch: on a gated layer's one-token step flash
# decode reads q in place from the Q product's [q | gate] rows (QkRopeArgs::q_stride) and its O writer applies the gate
# (OutEpilogue::gate, sigmoid_mul's arithmetic) and the int8 O input: split_q_gate, sigmoid_mul and rmsnorm_q8 go,
# three boundaries on each of the hybrids' attention layers); base = main. It conflicts with merge-graphs.patch in
# flash_decode's signature; gated-fold-after-merge-graphs.patch is the same change resolved onto merge-graphs.patch
# (git am merge-graphs.patch, then that one; built here, not run).
# 1. Kernel check attention (attention_rope: "flash_decode + rope + gate + int8 O fused (bits)" against split-free
#    fused RoPE, sigmoid_mul and rmsnorm_q8, every cache pair); GPU tests (fused_o_epilogue off: bit-identical on the
#    hybrids).
# 2. Prediction: 3 boundaries x ~1.5-2 us x 8 attention layers = ~40 us of a 2.35 ms step: Qwen3.5-9B Q4_K_M
#    425 -> ~432 (+1.5 %), Qwen3.6-35B-A3B (10 attention layers) 388 -> ~394; Qwen3-8B unchanged (control).
# Packing (here): git checkout wip/gated-fold (or git checkout -b wip/gated-fold 1d69a38 && git am
#   tools/wip/patches/gated-fold.patch); rm -f .carry/bins/*; pack-bins.sh new HEAD bw24-bench bw24-kernel-check
#   tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests libbw24.so.0; git checkout main; pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA attention_rope
grep -c "gate + int8 O fused (bits).*ok" "$OUT/kc-attention_rope-$SHA.txt"
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; echo "end t=$(el)"
