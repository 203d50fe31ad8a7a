#!/bin/bash
# next339 (round 60): wip/stream-quant: the streamed GEMV quantizes a one-token f32 input itself (ActQ8::f32), so
# the dense FFN's int8 launch before the down goes (next337's 8B trace: 2.5-3.0 us of segment a layer). Kernel
# check gemv_q8_streamed (the fold's rows bit-equal to the staged launch), then one binary with
# BW24_STREAM_QUANT=0/1 alternated: the 8B (two rounds), at depth 4096 and with a q8_0 cache, the 9B.
# Pack: bash tools/wip/pack-bins.sh squant HEAD bw24-bench bw24-kernel-check (on wip/stream-quant).
SHA=$1
source tools/wip/lib.sh
begin $SHA-stream-quant
for i in 1 2; do for v in 0 1; do row sq=$v squant qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_STREAM_QUANT=$v; done; done
KC_BUILD=squant kc $SHA gemv_q8_streamed; grep -c "quantized in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt"
grep "quantized in the launch" "$OUT/kc-gemv_q8_streamed-$SHA.txt" | grep -v " ok " | head -5
for v in 0 1; do row sq=$v squant qwen3.5-9b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_STREAM_QUANT=$v; done
for v in 0 1; do row d4096-sq=$v squant qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_STREAM_QUANT=$v; done
for v in 0 1; do row q8kv-sq=$v squant qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0" BW24_STREAM_QUANT=$v; done
echo "end t=$(el)"
