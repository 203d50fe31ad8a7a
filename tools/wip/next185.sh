#!/bin/bash
# next185 (carry .carry only): bash tools/wip/next185.sh SHA  (timeout 560) -- round 31's prepared next184 and next183 (removed once run) in one call:
# build-new = branch wip/gdn-typed (70d0782: bench + kernel check), build-base = main's device code (884b882's bench).
# 1. kernel check gdn of the constant-shape delta-net decode kernel; tg128 of Qwen3.5-9B and Qwen3.6-35B-A3B with main's
#    generic kernel (BW24_AB_GDN_GENERIC=1) and the typed one, alternated twice. Prediction: 9B +0.5-1.5 %.
# 2. Qwen3-8B Q4_K_M at depth 4096 traced kernel by kernel (f16 and q8_0 KV, build-base): where the ~317 us a step
#    beyond depth 0 go (the f16 depth ratio: 84.5 % against 85 %).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gdn
for i in 1 2; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row generic new $m tg128 "-p 16 -n 128 -r 3" BW24_AB_GDN_GENERIC=1
  row typed new $m tg128 "-p 16 -n 128 -r 3"
done; done
echo "ab done t=$(el)"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for kv in f16 q8_0; do
  m=qwen3-8b:Q4_K_M tag=qwen3-8b-Q4_K_M-d4096-$kv
  row plain base $m tg128 "-p 16 -n 128 -d 4096 -r 1 --kv $kv"
  row traced base $m tg128 "-p 16 -n 128 -d 4096 -r 1 --kv $kv" CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so \
    BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 48 > $OUT/profile-$tag.md 2>&1
  head -40 $OUT/profile-$tag.md
done
echo "end t=$(el)"
