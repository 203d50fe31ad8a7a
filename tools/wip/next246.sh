#!/bin/bash
# next246: the one-token MoE FFN in one launch (branch wip/moe-ffn: gemv_q8_moe_ffn, gate-up + int8 + down + combine
# behind a counter barrier, the down rows copied by cp.async while the gate-up streams). Carry .carry with the
# branch's kernel check and bench as new-- and main's bench as base--.
#   kernel check moe (its "gemv_q8_moe_ffn" rows: t and x bit-equal to the three launches, three runs each)
#   tg128 of base, new, new with BW24_MOE_FFN=0 (main's launches in the same binary), cooperative attribute off,
#   down copies after the first tile; Qwen3-30B-A3B two rounds; Qwen3.6-35B-A3B (shared expert: not fused) once
# Prediction: the gate-up + rmsnorm_q8 + combine segments, ~14 us a 30B layer, to ~10: 30B 649 -> ~700-740.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_rows $SHA moe 'gemv_q8_moe_ffn' 'moe down + combine' 'routed gemv'
grep "gemv_q8_moe_ffn" "$OUT/kc-moe-$SHA.txt" | head -20
for i in 1 2; do m=qwen3-30b-a3b:Q4_K_M
  row base base $m tg128 "-p 16 -n 128 -r 2"
  row new new $m tg128 "-p 16 -n 128 -r 2"
  row ffn-off new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_FFN=0
  row coop-off new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_FFN_COOP=0
  row late new $m tg128 "-p 16 -n 128 -r 2" BW24_MOE_FFN_LATE=1
done
m=qwen3.6-35b-a3b:Q4_K_M; row base base $m tg128 "-p 16 -n 128 -r 2"; row new new $m tg128 "-p 16 -n 128 -r 2"
echo "end t=$(el)"
