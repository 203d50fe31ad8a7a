#!/bin/bash
# next72 (carry .carry only):  bash tools/wip/next72.sh SHA  (timeout_s 560)
# new = wip/kv-ahead SHA (9b92995; tools/wip/patches/kv-ahead.patch onto a2de8ec): the attention block's input norm (rmsnorm_q8) requests the layer's K / V cache rows up to the
# step's position into L2 after its PDL wait (cuda::RowsAhead, 64 KB cp.async.bulk.prefetch requests spread over its
# CTAs; RunnerOptions::kv_l2_ahead). main = a2de8ec's bench (round 15's device code). Both packed in .carry.
# Why: at depth 4096 flash decode reads 16.8 MB of f16 cache a Qwen3-8B layer (8.9 MB q8_0) from DRAM after the
# Q/K/V GEMV, whose ~13.6 MB stream at ~1.4 TB/s leaves the DRAM ~2/3 idle for ~8 us: the cache can arrive under it.
# 1. Kernel check rmsnorm_q8 (with rows ahead: bit-equal, every cache type, the allocation's last row, a window) and
#    attention; GPU tests (fused-launches test with kv_l2_ahead off: logits bit-identical).
# 2. Prediction: depth 4096 ~3 us a layer less: Qwen3-8B f16 363 -> ~375 (ratio back over 85 % of 437.8), q8_0 KV
#    367 -> ~378 (90 % of 423 is 380.7: maybe not); depth 0 unchanged (the rows are few); 30B at 4096 360 -> ~370.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA rmsnorm_q8 attention
check_rows $SHA rmsnorm_q8 'rows into L2'
gpu_tests $SHA
D="-p 16 -n 128 -r 3 -d 4096"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "$D"; done; done
for b in main new; do row "$b kv=q8_0" $b qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"; done
echo "t=$(el)"
for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 3 -d 0"; [ $(el) -lt 420 ] && row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$D"; done
echo "end t=$(el)"
