#!/bin/bash
# next117 (carry .carry only): bash tools/wip/next117.sh SHA  (timeout 300)
# new = main SHA (5bef290: F16 / BF16 read the add epilogue's residual after the sums again; HalfStream's SASS = b600a5d's,
# every int8 instance = 366b4be's), packed from its clean HEAD; base = 366b4be's bench (next116: BF16 217.7).
# Its kernel check, GPU tests, BF16 A/B, and the BF16 and q8_0-KV acceptance rows.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_float gemv_float_multi gemv_q8_streamed gemv_q8_multi
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do row base base qwen3-8b:BF16 tg128 "$A"; row new new qwen3-8b:BF16 tg128 "$A"; done
echo "t=$(el)"
json $SHA 200 qwen3-8b:BF16 ""; json $SHA 250 qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
echo "end t=$(el)"
