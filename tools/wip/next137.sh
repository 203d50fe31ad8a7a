#!/bin/bash
# next137 (carry .carry only): bash tools/wip/next137.sh SHA  (timeout 300) -- round 24's review build 7bf7dfb (red_total
# by slot index, sum_fragments, pack_f16 in split2: every split kernel's SASS changed, the same arithmetic and order)
# against d4e0085's bench (the measured device code). Expect: the attention kernel check and GPU tests as before, and
# the rows within noise.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA attention attention_rope attention_bound
check_rows $SHA attention 'head groups'
gpu_tests $SHA
for b in main new; do for kv in f16 q8_0; do
  [ $(el) -lt 200 ] && row "$b kv=$kv d4096" $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 4096 --kv $kv"; done; done
echo "end t=$(el)"
