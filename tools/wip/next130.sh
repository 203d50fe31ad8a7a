#!/bin/bash
# next130 (carry .carry only): bash tools/wip/next130.sh SHA  (timeout 470). wip/q6k-tiles after next129 (kernel check
# gemv_q8_streamed, dequant, gemm, moe and the GPU tests passed; tg128 +3.6 % Qwen3-8B Q4_K_M, +5.2 % Qwen3.5-9B): the
# full gemv_q8 family (the warp-per-row Q6_K reads the tiles too), then the acceptance rows of the new build.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gemv_q8
json $SHA 400 qwen3-8b:Q4_K_M ""
json $SHA 400 qwen3.5-9b:Q4_K_M ""
json $SHA 400 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
json $SHA 400 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
