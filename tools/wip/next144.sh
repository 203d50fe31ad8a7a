#!/bin/bash
# next144 (carry .carry only): bash tools/wip/next144.sh SHA  (timeout 420) -- round 26: next143's build again: every gemv
# kernel-check family (gemv_float_multi's four-segment rows had not run: next143 asked for "gemv_multi") and moe, more
# A/B rows, and the new build's decode step traced (tools/trace, as next142) for Qwen3.5-9B. Pack as next143, without
# the test programs; .carry/trace as next142.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv moe
check_rows $SHA gemv ' + 9 x\| + 32 x'
for i in 1 2; do for b in new main; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 300 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
m=qwen3.5-9b:Q4_K_M; tag=${m/:/-}
[ $(el) -lt 330 ] && row traced new $m tg128 "-p 16 -n 128 -r 1" CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so \
  BW24_KERNEL_TRACE=/tmp/trace-$tag.csv && \
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 48 > $OUT/profile-$tag-new.md 2>&1
head -14 $OUT/profile-$tag-new.md
echo "end t=$(el)"
