#!/bin/bash
# next377 (round 65, for the next device call): lean instances (wip/lean2 3d1dd25, packed as new with the tests).
# BW24_LEAN=1 takes folded GEMV instances that hold only the stage_q8_rows form their width takes (kShortAct / kLongAct)
# and a 1 / rms loop without remainder code: Q + K 31.1 -> 25.2 KB of SASS, the folded gate-up 35.2 -> 29.4, V 33.4 ->
# 27.0, the O producer 31.9 -> 27.4, the downs 34.3 -> 31.2 (Q6_K) and 33.8 -> 30.7 (Q4_K); registers 64-72, no stack.
# BW24_LEAN=2 also the plain instances of those formats (whole groups and pieces) and the unfolded int8-output gate-up.
# BW24_LEAN_FLASH=1 takes flash decode step instances without the double sincos path (they read rope_table's angles
# only): half, one head a CTA 56.8 -> 42.5 KB, stack 40 -> 0 bytes. With none set every launch runs main's instances
# (all SASS-identical to main 3f2b9be's). next376: the fold producers cost ~3 % beside plain consumers and the kNormIn
# consumers ~3 % beside plain-ish producers, 3.7 % together, which an instruction-cache reading predicts; this tests it.
# JSONs on BW24_LEAN=1 BW24_LEAN_FLASH=1: what wip/lean-land (the landing form) runs, instance for instance.
# Since round 66 the build is wip/defer 73c2642 (wip/lean2 and one more switch): BW24_DEFER=1 with BW24_LEAN=1 takes
# lean folded stores (Q + K, V) that reduce a complete row's sums during the warp's next item, a tree level after each
# step of its products, not between the items (the round 64 list's per-row warp_sum; same bits). Every other instance
# SASS-identical to wip/lean2's (cuobjdump); the rows without BW24_DEFER are wip/lean2's. The GPU tests run every switch
# (BW24_LEAN=2's plain instances, the flash step instances, the deferred stores); the last JSON is wip/lean-land-defer's.
SHA=$1
source tools/wip/lib.sh
begin $SHA-lean
BW24_LEAN=2 kc_one $SHA gemv_q8_norm_fold gemv_q8_streamed gemv_q8_gate_up_q8  # one file: a call brings back 8
BW24_LEAN_FLASH=1 kc $SHA attention_rope
BW24_LEAN=1 BW24_DEFER=1 kc $SHA-defer gemv_q8_norm_fold
for i in 1 2 3; do
  row main new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row lean new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=1
  row lean+flash new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=1 BW24_LEAN_FLASH=1
  row lean2+flash new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=2 BW24_LEAN_FLASH=1
  row lean+flash+defer new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=1 BW24_LEAN_FLASH=1 BW24_DEFER=1
done
for i in 1 2; do
  row nofold new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0
  row nofold-lean2 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_NORM_FOLD=0 BW24_LEAN=2
done
row main-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
row lean+flash-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_LEAN=1 BW24_LEAN_FLASH=1
row lean+flash+defer-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_LEAN=1 BW24_LEAN_FLASH=1 BW24_DEFER=1
row main new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row lean2+flash new qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=2 BW24_LEAN_FLASH=1
row main new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row lean2+flash new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_LEAN=2 BW24_LEAN_FLASH=1
BW24_LEAN=2 BW24_LEAN_FLASH=1 BW24_DEFER=1 gpu_tests $SHA
BW24_LEAN=1 BW24_LEAN_FLASH=1 json $SHA 450 qwen3-8b:Q4_K_M ""
BW24_LEAN=1 BW24_LEAN_FLASH=1 json $SHA 450 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
BW24_LEAN=1 BW24_LEAN_FLASH=1 BW24_DEFER=1 json $SHA 480 qwen3-8b:Q4_K_M "-defer"
echo "end t=$(el)"
