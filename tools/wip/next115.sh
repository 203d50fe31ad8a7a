#!/bin/bash
# next115 (carry .carry only): bash tools/wip/next115.sh SHA CAND  (timeout 590)
# new = land/act-once SHA (the int8 staging in one round trip, Q8_0's streamed kernel excepted: every instance's SASS
# equals a build that next112 measured), packed from its clean HEAD: its kernel check, GPU tests and acceptance rows.
# cand = wip/resid-ahead2 CAND (new + the streamed add epilogue's old value read before the stage's wait; next114's
# change): tg128 A/B against new. Prediction: 8B Q4_K_M +1-1.5 %, Q8_0 alike, BF16 +0.5 %.
SHA=$1 CAND=$2
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0; do row new new $m tg128 "$A"; row cand cand $m tg128 "$A"; done; done
for m in qwen3.5-9b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do row new new $m tg128 "$A"; row cand cand $m tg128 "$A"; done
echo "t=$(el)"
json $SHA 330 qwen3-8b:Q8_0 ""; json $SHA 380 qwen3.5-9b:Q8_0 ""; json $SHA 430 qwen3-8b:Q4_K_M ""
json $SHA 480 qwen3-30b-a3b:Q4_K_M ""; json $SHA 530 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
