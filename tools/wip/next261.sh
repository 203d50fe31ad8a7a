#!/bin/bash
# next261 (round 46): the expert prefetch (cuda/moe/prefetch.cu; BW24_MOE_PREFETCH=N): a side stream of the decode
# graph, forked at each MoE layer's start, ranks the experts on the layer-start residual and bulk-prefetches the picks'
# gate / up / down slices into L2 while the attention block runs. One binary (new-- bench and kernel check): the moe
# kernel-check family (moe_prefetch rows), the hit rate on the synthetic shapes (BW24_MOE_PREFETCH_STATS=1), then tg128
# with the prefetch off / 8 picks / 8 without the downs / 12, alternated twice (Qwen3-30B-A3B), and off / 8 for the 35B.
# Prediction: with most picks right, the routed gate-up and combine read from L2 (their DRAM waves ~1.5-2.5 us a layer):
# +4-8 % on Qwen3-30B-A3B; with few right (random synthetic weights), 0 to -2 % (HBM contention during attention).
SHA=$1
source tools/wip/lib.sh
begin $SHA-prefetch
[ "${KC:-1}" = 1 ] && KC_BUILD=new kc $SHA moe
[ "${KC:-1}" = 1 ] && grep "moe_prefetch" $OUT/kc-moe-$SHA.txt | head -12
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do for n in 8 12; do
  BW24_MOE_PREFETCH=$n BW24_MOE_PREFETCH_STATS=1 timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 16 -n 128 -r 1 \
    --device 0 2>&1 | grep -E "tg128|expert prefetch|rror" | sed "s/^/stats $m $n: /"; done; done
echo "stats t=$(el)"
for i in 1 2; do for n in 0 8 8d 12; do
  if [ $n = 8d ]; then row "pf 8 no-down" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_MOE_PREFETCH=8 BW24_MOE_PREFETCH_DOWN=0
  else row "pf $n" new qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_MOE_PREFETCH=$n; fi; done; done
for i in 1 2; do for n in 0 8; do row "pf $n" new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_MOE_PREFETCH=$n; done; done
echo "end t=$(el)"
