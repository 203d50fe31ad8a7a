#!/bin/bash
# next247: next246 measured the fused MoE FFN 8.5 % slower (30B 647.5 -> 592.5; cooperative attribute off 606).
# The same branch with the barrier's knobs, one binary (carry .carry with the branch's bench and kernel check as
# new--, and .carry/trace): BW24_MOE_FFN_FLAG (1: the last arrival sets a flag in its own line, polled instead of
# the count the atomics hit), BW24_MOE_FFN_COPY (0 before the first tile, 1 after it, 2 after the barrier: no
# overlap), BW24_MOE_FFN_SLEEP (poll backoff ns), BW24_MOE_FFN_COOP; the 30B step traced with the fused launch.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'gemv_q8_moe_ffn'
m=qwen3-30b-a3b:Q4_K_M; a="-p 16 -n 128 -r 2"
row off new $m tg128 "$a" BW24_MOE_FFN=0
row flag new $m tg128 "$a"
row flag-nocoop new $m tg128 "$a" BW24_MOE_FFN_COOP=0
row count-nocoop new $m tg128 "$a" BW24_MOE_FFN_COOP=0 BW24_MOE_FFN_FLAG=0
row copy-after-barrier new $m tg128 "$a" BW24_MOE_FFN_COOP=0 BW24_MOE_FFN_COPY=2
row copy-after-tile new $m tg128 "$a" BW24_MOE_FFN_COOP=0 BW24_MOE_FFN_COPY=1
row sleep200 new $m tg128 "$a" BW24_MOE_FFN_COOP=0 BW24_MOE_FFN_SLEEP=200
row off new $m tg128 "$a" BW24_MOE_FFN=0
row flag-nocoop new $m tg128 "$a" BW24_MOE_FFN_COOP=0
[ $(el) -lt 300 ] && TRACE_LINES=16 TRACE_POS=10 trace_row fused-nocoop $m "-p 16 -n 128 -r 1" BW24_MOE_FFN_COOP=0
echo "end t=$(el)"
