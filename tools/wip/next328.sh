#!/bin/bash
# next328 (round 59): wip/router-room with the room counted against the SM's own shared memory (228 KB: next327
# found the O projection padded to 76,459 B by 227 KB, three of which still fit an SM, hence next326's nil), in one
# binary with BW24_ROUTER_ROOM=0/1 alternated; kernel check gemv_q8_room and moe, the GPU tests, the 30B JSON.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (on wip/router-room).
SHA=$1
source tools/wip/lib.sh
begin $SHA-router-room
kc $SHA gemv_q8_room moe; grep -h "room" "$OUT/kc-gemv_q8_room-$SHA.txt" "$OUT/kc-moe-$SHA.txt"; gpu_tests $SHA
for i in 1 2; do for v in 0 1; do row room$v new qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROUTER_ROOM=$v; done; done
for v in 0 1; do row room$v new qwen3.6-35b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_ROUTER_ROOM=$v; done
json $SHA 400 qwen3-30b-a3b:Q4_K_M ""
echo "end t=$(el)"
