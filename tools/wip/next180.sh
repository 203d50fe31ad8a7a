#!/bin/bash
# next180 (carry .carry only): bash tools/wip/next180.sh SHA  (timeout 560) -- round 31: flash decode's fused writer
# compiled for the instance's cache type (d1794d8, wip/typed-store: store_kv / put_key without the six-type switch, the
# head size a constant; f16 D = 128 one-head instance 7,200 -> 4,512 SASS instructions, D = 256 10,680 -> 5,688) as
# build-new, main's device code (57a6cde) as build-base. Kernel checks of the attention families, then tg128 alternated.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound qk_rope
check_rows $SHA attention 'head groups'
ab "-p 16 -n 128 -r 3" qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M
echo "ab t=$(el)"
for i in 1 2; do for b in base new; do [ $(el) -lt 470 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"; done; done
echo "end t=$(el)"
