#!/bin/bash
# next308 (round 55): the q8_0 writer's K and V rows four elements a lane (store_kv_q8_rows, branch wip/q8-rows):
# kernel checks qk_rope, attention_rope, attention (same bytes), then tg128 rows, main's bench (base) against the
# branch's (new), alternated.
SHA=$1
source tools/wip/lib.sh
begin $SHA-q8-rows
kc_one $SHA attention qk_rope attention_rope
for i in 1 2; do for b in base new; do
  row $b $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
  row $b-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 0 -d 4096 -n 128 -r 2 --kv q8_0"
done; done
for b in base new; do
  row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
  row $b-f16 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row $b-9b $b qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
done
echo "end t=$(el)"
