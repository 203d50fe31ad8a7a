#!/bin/bash
# next304 (round 54): wip/packed-q8: int8 codes stored four at a time (store_act_q8: rmsnorm_q8, flash decode's O
# writers, the delta net's out_proj input) and a q8_0 KV row's codes one store a lane (flash decode's writer). next303
# found the writer's byte stores slowing flash decode's next phase by ~2 us (q8_0). Same bytes: kernel checks.
# base = 5c1fddc's bench. Prediction: Qwen3-8B q8_0 KV +3-4 % (depth 0 and 4096); f16 and the others +0-2 %.
# Pack: base--bw24-bench.xz (5c1fddc), tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check.
SHA=$1
source tools/wip/lib.sh
begin $SHA-packed-q8
kc_one $SHA attention rmsnorm qk_rope attention_rope gdn
for i in 1 2; do for b in base new; do row $b-f16 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done; done
for b in base new; do row $b-q8 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"; done
for b in base new; do row $b-f16-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 0 -n 128 -d 4096 -r 2"; done
for b in base new; do row $b-q8-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 0 -n 128 -d 4096 -r 2 --kv q8_0"; done
for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
echo "end t=$(el)"
