#!/bin/bash
# next388 (round 71): the depth side. At depth 4096 the flash decode split kernel's segment exceeds depth 0's by ~3.8 us
# a Qwen3-8B layer, about its 16.8 MB of f16 K and V at the copy rate: the cache rows stream only once flash decode's
# CTAs are resident, after the attention chain's latency-bound launches have left DRAM idle. BW24_KV_AHEAD=1
# (wip/gateup-bymat, tools/wip/patches/kv-ahead2.patch): the layer's Q + K launch requests the K and V rows up to the
# position into L2 after its PDL wait (the previous layer's down has ended), 16 KB pieces over its ~320 CTAs' producer
# warps (~54 KB a CTA). Round 16's request from a separate norm launch lost (its CTAs' requests held that launch's
# completion); this one rides a launch that stays resident for its own work. No arithmetic changes (the same bits).
# The rows: main against the switch at depth 4096 (f16 three times, q8_0), depth 0 (f16, q8_0), Qwen3-30B-A3B (4096,
# 0) and Qwen3.5-9B (4096), and with next387's BW24_GATEUP_BYMAT=1 beside; both traced at depth 4096; the GPU tests
# and the acceptance JSONs with it (~450 s).
# Pack (on wip/gateup-bymat, committed, from /work/main with a clean tree):
#   tools/wip/pack-bins.sh new HEAD bw24-bench bw24-microbench bw24-kernel-check tests/bw24_model_tests \
#     tests/bw24_gpu_vs_cpu_tests
#   .carry/trace as in next387. Run: bash tools/wip/next388.sh SHA, carrying [".carry"].
SHA=$1
source tools/wip/lib.sh
begin $SHA-kvahead
D="-p 16 -n 128 -d 4096 -r 2" P="-p 512 -n 128 -r 2"
for i in 1 2 3; do
  row main-d4096 new qwen3-8b:Q4_K_M tg128 "$D"
  row kvahead-d4096 new qwen3-8b:Q4_K_M tg128 "$D" BW24_KV_AHEAD=1
done
row main-q8-d4096 new qwen3-8b:Q4_K_M tg128 "$D --kv q8_0"
row kvahead-q8-d4096 new qwen3-8b:Q4_K_M tg128 "$D --kv q8_0" BW24_KV_AHEAD=1
row main-q8-d0 new qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"
row kvahead-q8-d0 new qwen3-8b:Q4_K_M tg128 "$P --kv q8_0" BW24_KV_AHEAD=1
row main-d0 new qwen3-8b:Q4_K_M tg128 "$P"
row kvahead-d0 new qwen3-8b:Q4_K_M tg128 "$P" BW24_KV_AHEAD=1
row both-d0 new qwen3-8b:Q4_K_M tg128 "$P" BW24_KV_AHEAD=1 BW24_GATEUP_BYMAT=1
row both-d4096 new qwen3-8b:Q4_K_M tg128 "$D" BW24_KV_AHEAD=1 BW24_GATEUP_BYMAT=1
row main-d4096 new qwen3-30b-a3b:Q4_K_M tg128 "$D"
row kvahead-d4096 new qwen3-30b-a3b:Q4_K_M tg128 "$D" BW24_KV_AHEAD=1
row main-d0 new qwen3-30b-a3b:Q4_K_M tg128 "$P"
row kvahead-d0 new qwen3-30b-a3b:Q4_K_M tg128 "$P" BW24_KV_AHEAD=1
row main-d4096 new qwen3.5-9b:Q4_K_M tg128 "$D"
row kvahead-d4096 new qwen3.5-9b:Q4_K_M tg128 "$D" BW24_KV_AHEAD=1
echo "rows t=$(el)"
TRACE_POS=8 TRACE_LINES=12 trace_row main-d4096 qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1"
TRACE_POS=8 TRACE_LINES=12 trace_row kvahead-d4096 qwen3-8b:Q4_K_M "-p 16 -n 128 -d 4096 -r 1" BW24_KV_AHEAD=1
BW24_KV_AHEAD=1 gpu_tests $SHA-kvahead
BW24_KV_AHEAD=1 json $SHA 520 qwen3-8b:Q4_K_M "-kvahead"
BW24_KV_AHEAD=1 json $SHA 550 qwen3-8b:Q4_K_M "-kvahead-q8kv" --kv q8_0
echo "end t=$(el)"
