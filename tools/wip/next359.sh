#!/bin/bash
# next359 (round 63): the down's L2 request of the next Q's first quarter (NormOut::ahead, wip/fold-ahead2) against main
# (c9549e7, the fold alone), alternated; its kernel check row, the GPU tests and the Qwen3-8B acceptance JSONs.
# Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests \
#   tests/bw24_gpu_vs_cpu_tests (wip/fold-ahead2); bash tools/wip/pack-bins.sh base c9549e7 bw24-bench.
SHA=$1
source tools/wip/lib.sh
begin $SHA-${TAG:-ahead-land}
A="-p 512 -n 128 -r 2"
for i in 1 2 3; do row base base qwen3-8b:Q4_K_M tg128 "$A"; row new new qwen3-8b:Q4_K_M tg128 "$A"; done
for b in base new; do row $b-d4096 $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"; done
kc $SHA gemv_q8_norm_fold
gpu_tests $SHA
grep -E "mid-qwen3" "$OUT/gpu-tests-$SHA.txt"
json $SHA 400 qwen3-8b:Q4_K_M ""; json $SHA 400 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
json $SHA 400 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
