#!/bin/bash
# next156 (carry .carry only): bash tools/wip/next156.sh SHA  (timeout 560) -- round 28: flash decode's writer warp (and
# qk_rope_store's key warps) load the token's value row with the key row (branch wip/kv-rows). Before, store_kv_tail read
# each value element after the cache stores before it (the compiler cannot tell the buffers apart): D / 32 dependent L2
# round trips (4 at D = 128, 8 at 256) on the warp the CTA's barrier waits for (SASS of e2b116b: LDG, STG, LDG, STG ...).
# main = e2b116b's bench (4b125ca's device code). Pack: tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check
# tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests; .carry/bins/main--bw24-bench.xz from build-pack/e2b116b.
# Expect: kernel check attention / attention_rope / attention_bound / qk_rope all ok (the fused launch's output bit-equal
# and caches byte-equal to qk_rope_store + flash_decode); GPU tests passed. Prediction: flash decode's segment -1-1.5 us
# a layer at short context: Qwen3-8B Q4_K_M tg128 +1.5-3 %, Qwen3-30B-A3B +2-3 % (warp 0 writes after its query),
# Qwen3.5-9B +0.5-1 % (8 attention layers), Qwen3.6-35B-A3B +0.5-1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
kc $SHA qk_rope
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 440 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for b in main new; do [ $(el) -lt 490 ] && row $b-q8kv-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2 -d 4096 --kv q8_0"; done
echo "end t=$(el)"
