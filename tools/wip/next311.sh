#!/bin/bash
# next311 (round 55): flash decode's dry pass before the PDL wait, so that the code after the wait runs from a warm
# instruction cache (branch wip/fd-warm; BW24_FLASH_WARM=0 in the same binary is main's path). Kernel checks with it
# on, then tg128 rows alternated off / on.
SHA=$1
source tools/wip/lib.sh
begin $SHA-fd-warm
kc_one $SHA attention attention_rope
for i in 1 2; do for w in 0 1; do
  row warm$w new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_WARM=$w
  row warm$w new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_WARM=$w
done; done
for w in 0 1; do
  row warm$w-d4096 new qwen3-8b:Q4_K_M tg128 "-p 0 -d 4096 -n 128 -r 2" BW24_FLASH_WARM=$w
  row warm$w-q8 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0" BW24_FLASH_WARM=$w
done
echo "end t=$(el)"
