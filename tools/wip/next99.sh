#!/bin/bash
# next99 (carry .carry only): bash tools/wip/next99.sh SHA  (timeout_s 280)
# main SHA (b69d2c9, the Q6_K short-row pieces landed; programs packed from its clean HEAD): the GEMV kernel-check
# families (the streamed launches sit under gemv_q8 / gemv_q8_multi one-token rows too), the GPU tests, one 30B row.
SHA=$1
source tools/wip/lib.sh
begin $SHA-next99
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float_multi
[ $(el) -lt 120 ] && kc $SHA gemv_q8
[ $(el) -lt 170 ] && gpu_tests $SHA
[ $(el) -lt 200 ] && row new new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 3"
echo "end t=$(el)"
