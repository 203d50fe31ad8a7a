#!/bin/bash
# next116 (carry .carry only): bash tools/wip/next116.sh SHA  (timeout 560)
# The landed build (main SHA: 13137db's one-trip int8 staging, 797629e's Q8_0 exception, 366b4be's early residual read;
# gemv_stream.cu's and gemv_q8.cu's SASS = 461b4a5's, measured in next115), packed from its clean HEAD: kernel check of
# the streamed, multi and float families, the GPU tests, and the acceptance rows (-p 512 -n 128 -d 0,4096 -r 2).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float gemv_float_multi
gpu_tests $SHA
json $SHA 120 qwen3-8b:Q8_0 ""; json $SHA 170 qwen3-8b:Q4_K_M ""; json $SHA 220 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 270 qwen3-8b:BF16 ""; json $SHA 320 qwen3.5-9b:Q8_0 ""; json $SHA 370 qwen3.5-9b:Q4_K_M ""
json $SHA 420 qwen3-30b-a3b:Q4_K_M ""; json $SHA 470 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
