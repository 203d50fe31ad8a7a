#!/bin/bash
# next385 (round 70): flash decode's tensor-core step instances bounded to three CTAs an SM (BW24_FLASH_BOUND=3: 80
# registers, no spills, against 108-110 at two) beside main's, one binary (wip/flash-bound3), alternated. Why: at 110
# registers a flash CTA (28,672) leaves room for one streamed GEMV CTA (20,736) on its SM, at 80 (20,480) for two, so
# the O projection's and the gate-up's CTAs can be resident (and copy their first stages) during flash decode. Then
# kernel check attention_rope, the GPU tests and the acceptance JSONs with the switch, and both traced at depth 0.
# Pack: tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests tests/bw24_gpu_vs_cpu_tests; .carry/trace from build-dev and CUDA 13.0.
SHA=$1
source tools/wip/lib.sh
begin $SHA-bound3
for i in 1 2 3; do
  row main new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
  row bound3 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_BOUND=3
done
for i in 1 2; do
  row main-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
  row bound3-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2" BW24_FLASH_BOUND=3
done
row main-q8-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0"
row bound3-q8-d4096 new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2 --kv q8_0" BW24_FLASH_BOUND=3
row main-q8 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"
row bound3-q8 new qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0" BW24_FLASH_BOUND=3
row main new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"
row bound3 new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_FLASH_BOUND=3
echo "rows done t=$(el)"
BW24_FLASH_BOUND=3 kc $SHA attention_rope
# with the switch on: the GPU tests and the acceptance JSONs (the landing form's instances are these)
BW24_FLASH_BOUND=3 gpu_tests $SHA
BW24_FLASH_BOUND=3 json $SHA 420 qwen3-8b:Q4_K_M "-bound3"
BW24_FLASH_BOUND=3 json $SHA 450 qwen3-8b:Q4_K_M "-bound3-q8kv" --kv q8_0
[ $(el) -lt 480 ] && TRACE_POS=0 TRACE_LINES=16 trace_row main-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1"
[ $(el) -lt 500 ] && TRACE_POS=0 TRACE_LINES=16 trace_row bound3-d0 qwen3-8b:Q4_K_M "-p 16 -n 128 -r 1" BW24_FLASH_BOUND=3
echo "end t=$(el)"
