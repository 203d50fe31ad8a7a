#!/bin/bash
# next97 (carry .carry only): bash tools/wip/next97.sh SHA  (timeout_s 420)
# new = wip/chunk8 SHA: streamed-GEMV pieces of 8 blocks for rows of <= 8 blocks (K <= 2048): Q6_K always (next96:
# 30B +1.3 %), Q4_K / Q5_K with BW24_KQ_SHORT=1 (the 30B's and 35B's Q, K, V over the 2048-wide hidden row).
# base = main 9e0707c's bench. Prediction: Q6_K alone 30B ~+1.3 %; KQ short another +1-2 % (30B Q/K/V 3.5 us a layer).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed
BW24_KQ_SHORT=1 timeout 100 ./build-new/bw24-kernel-check gemv_q8_streamed > /tmp/kc.txt 2>&1
echo "KQ_SHORT kernel-check gemv_q8_streamed rc=$? $(tail -n 1 /tmp/kc.txt)"; grep -E "FAIL|rror" /tmp/kc.txt | head -5
grep "2048" /tmp/kc.txt | sed "s/^/KQ_SHORT /" >> "$OUT/kc-gemv_q8_streamed-$SHA.txt"
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do m=qwen3-30b-a3b:Q4_K_M
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; row kq new $m tg128 "$A" BW24_KQ_SHORT=1; done
m=qwen3.6-35b-a3b:Q4_K_M; row base base $m tg128 "$A"; row new new $m tg128 "$A"; row kq new $m tg128 "$A" BW24_KQ_SHORT=1
row new new qwen3-8b:Q4_K_M tg128 "$A"
echo "end t=$(el)"
