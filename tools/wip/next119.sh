#!/bin/bash
# next119 (carry .carry only): bash tools/wip/next119.sh SHA  (timeout 580)
# new = wip/next119 SHA, packed from its clean HEAD; base = main's bench (device code = 5bef290's). Three changes, each
# an L2 round trip or more fewer between a kernel's PDL wait and its output; same values, same sum orders:
# (1) rmsnorm_q8 loads the lane's own element before the sum of squares (2 launches a layer): ~0.5 us each, Qwen3-8B
#     Q4_K_M +1-1.7 % at every depth, BF16 unchanged (its norms are rmsnorm).
# (2) gemv_q8_combine reads its pair's expert and epilogue inputs beside the staging: MoE +2 %, dense unchanged.
# (3) flash decode's merge kernel (launched past 8 visible splits, depth > 1,024): the position read before its wait,
#     a lane's (m, l) pairs four at a time, each warp's first run of partials (six splits) beside the (M, L) loads:
#     at depth 4096 (33-34 splits) ~5 serial round trips -> 1, ~1.6 us a layer: depth-4096 rows ~+2.4 % more than
#     the depth-0 rows gain, i.e. the q8_0-KV ratio 89.8 % -> ~91 %, f16 85.05 % -> ~86 %.
# Depth 0 measures (1) and (2); depth 4096 all three: (3) = the depth-4096 gain in time a token minus the depth-0 one.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm moe attention
# the new 17000-position case (133 visible splits) walks the merge kernel's later rounds and runs
check_rows $SHA rmsnorm 'combine'
check_rows $SHA rmsnorm 'pos 17000'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"; D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done
  row "base d4096" base qwen3-8b:Q4_K_M tg128 "$D"; row "new d4096" new qwen3-8b:Q4_K_M tg128 "$D"
  row "base d4096 kv=q8_0" base qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; row "new d4096 kv=q8_0" new qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"
done
echo "t=$(el)"
for m in qwen3-8b:Q8_0 qwen3.6-35b-a3b:Q4_K_M qwen3-8b:BF16; do [ $(el) -lt 430 ] && { row base base $m tg128 "$A"; row new new $m tg128 "$A"; }; done
[ $(el) -lt 480 ] && { row "base kv=q8_0" base qwen3-8b:Q4_K_M tg128 "$A --kv q8_0"; row "new kv=q8_0" new qwen3-8b:Q4_K_M tg128 "$A --kv q8_0"; }
[ $(el) -lt 510 ] && { row "base d4096" base qwen3-30b-a3b:Q4_K_M tg128 "$D"; row "new d4096" new qwen3-30b-a3b:Q4_K_M tg128 "$D"; }
echo "end t=$(el)"
