#!/bin/bash
# next282 (round 51): next281 found flash decode's split kernel faster with its PDL trigger after its wait where no
# merge launch follows (BW24_TRIG_FLASH=1: Qwen3-8B 588.3 / 588.6 -> 595.3 / 595.1). Here: the other shapes, the
# delta net's decode kernel the same way (BW24_TRIG_GDN=1: its successor is the out projection's streamed GEMV), the
# MoE combine (BW24_TRIG_COMBINE=1: the next layer's norm, and with it the Q + K GEMV's early copies, launch after the
# combine's wait), and at depth 4096 the split kernel's trigger after its wait with the merge launch too (FLASH=3).
# Prediction: 30B +0.5-1 %, 9B / 35B +0.5-1.5 % with flash + gdn; combine -1 to +1 %; depth 4096 -0.5 to +0.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA-late-trigger2
BW24_TRIG_FLASH=1 BW24_TRIG_GDN=1 BW24_TRIG_COMBINE=1 gpu_tests $SHA
A="-p 16 -n 128 -r 2"
for i in 1 2; do
  row flash0 new qwen3-30b-a3b:Q4_K_M tg128 "$A"
  row flash1 new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_TRIG_FLASH=1
  row flash1comb1 new qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_TRIG_FLASH=1 BW24_TRIG_COMBINE=1
  m=qwen3.6-35b-a3b:Q4_K_M
  row base new $m tg128 "$A"
  [ $i = 1 ] && row both new $m tg128 "$A" BW24_TRIG_FLASH=1 BW24_TRIG_GDN=1
  [ $i = 1 ] && row gdn1 new $m tg128 "$A" BW24_TRIG_GDN=1
  row all3 new $m tg128 "$A" BW24_TRIG_FLASH=1 BW24_TRIG_GDN=1 BW24_TRIG_COMBINE=1
  m=qwen3.5-9b:Q4_K_M
  row base new $m tg128 "$A"
  row both new $m tg128 "$A" BW24_TRIG_FLASH=1 BW24_TRIG_GDN=1
  [ $i = 1 ] && row gdn1 new $m tg128 "$A" BW24_TRIG_GDN=1
  [ $i = 1 ] && for f in 0 1; do row flash$f new qwen3-8b:Q4_K_M tg128 "$A" BW24_TRIG_FLASH=$f; done
  echo "round $i t=$(el)"
done
for f in 0 3; do [ $(el) -lt 470 ] && row flash$f new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_TRIG_FLASH=$f; done
echo "end t=$(el)"
