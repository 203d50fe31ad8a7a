#!/bin/bash
# next139 (carry .carry only): bash tools/wip/next139.sh SHA  (timeout 450) -- round 25: moe_gate on sm_90 as one
# cluster of 16 (8) CTAs whose logits meet in CTA 0's shared memory (branch wip/gate-cluster 59d5bd1). main = 7bf7dfb's
# bench (= main 1c7553b's device code). Expect: kernel check moe all ok (moe_gate rows: the cluster kernel's logits,
# ids and weights bit-equal to gate_kernel's), GPU tests passed. Prediction: the router 7.5 -> ~5.5 us serialized;
# Qwen3-30B-A3B tg128 +2-4 %, Qwen3.6-35B-A3B similar (256 experts: 16 a CTA, two passes), dense rows unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA moe
check_rows $SHA moe 'moe_gate'
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  [ $(el) -lt 300 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
json $SHA 360 qwen3-30b-a3b:Q4_K_M ""
[ $(el) -lt 380 ] && NCU_RANGE="--launch-skip 4000 --launch-count 460" breakdown 30b $SHA \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 40 -r 1 -d 0 --device 0
echo "end t=$(el)"
