#!/bin/bash
# next248 (built, not run: the session's device time was spent): the fused MoE FFN timed from inside (BW24_STAMPS=1: %globaltimer at 8 points of every CTA; the first /
# median / last CTA at each, after the first CTA past its wait, medians over calls), count polling, no cooperative
# attribute; down copies after the first tile (COPY=1) and after the barrier (COPY=2).
# Carry .carry with the branch's bench (a8a308d) as new--.
SHA=$1
source tools/wip/lib.sh
begin $SHA
m=qwen3-30b-a3b:Q4_K_M; a="-p 16 -n 128 -r 2"
for c in 1 2; do echo "== stamps COPY=$c"
  env BW24_STAMPS=1 BW24_MOE_FFN_COOP=0 BW24_MOE_FFN_FLAG=0 BW24_MOE_FFN_COPY=$c timeout 90 ./build-new/bw24-bench \
    -m synthetic:$m -p 16 -n 128 -r 1 --device 0 2>&1 | grep -E "tg128|stamps|^  " ; done
echo "end t=$(el)"
