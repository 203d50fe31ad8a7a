#!/bin/bash
# next299 (round 54): wip/kv-blocks: flash decode's KV writer (store_kv_tail) finds a q8_0 / q4_0 head's block scales
# side by side (one chain of five shuffles for K's and V's eight blocks at D = 128, not eight) after loading every
# element first. Same bytes (kernel check qk_rope / attention_rope / attention). base = 5c1fddc's bench (the same
# device code for these rows). Prediction: Qwen3-8B q8_0 KV +0.5-1.5 % at depth 0 and 4096; f16 unchanged.
# Also: the q8_0 / f16 gap at depth 0 with flash decode left out (BW24_ABLATE=attn,rope), new binary.
# Pack: base--bw24-bench.xz (5c1fddc), tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check.
SHA=$1
source tools/wip/lib.sh
begin $SHA-kv-blocks
kc_one $SHA qk_rope attention_rope attention
for i in 1 2; do for b in base new; do row $b-q8 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"; done; done
for b in base new; do row $b-f16 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
for b in base new; do row $b-q8-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 0 -n 128 -d 4096 -r 2 --kv q8_0"; done
for kv in f16 q8_0; do row abl-$kv new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv $kv" BW24_ABLATE=attn,rope; done
row new-30b-q8 new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
row base-30b-q8 base qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
echo "end t=$(el)"
