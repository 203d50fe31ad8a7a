#!/bin/bash
# next108 (carry .carry only): bash tools/wip/next108.sh SHA  (timeout 560)
# new = main SHA: Q8_0 streamed as landed (pieces of 16, of 8 for rows of at most 8 blocks; no hook), packed from its
# clean HEAD. Verification (kernel check of the int8 GEMV families, the GPU tests) and the Q8_0 acceptance row.
# Prediction: Qwen3-8B Q8_0 tg128 ~399 (next107's pieces of 16), Qwen3-0.6B Q8_0 ~1480 (pieces of 8 but the downs).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_q8
check_rows $SHA gemv_q8_streamed 'Q8_0'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do row new new qwen3-8b:Q8_0 tg128 "$A"; row new new qwen3-0.6b:Q8_0 tg128 "$A"; done
echo "t=$(el)"
json $SHA 440 qwen3-8b:Q8_0 ""; json $SHA 480 llama3-8b:Q8_0 ""
echo "end t=$(el)"
