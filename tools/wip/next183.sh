#!/bin/bash
# next183 (carry .carry only; prepared in round 31, not run): bash tools/wip/next183.sh SHA  (timeout 300) -- the
# Qwen3-8B Q4_K_M step at depth 4096 traced kernel by kernel (tools/trace as next177 / next182, f16 and q8_0 KV), for
# the f16 depth ratio (84.5 % against 85 %, round 31): where the 317 us a step beyond depth 0 go (the split kernel's
# four-head instance over 33 splits, the merge launch). Pack: tools/wip/pack-bins.sh new SHA bw24-bench; .carry/trace as
# next177's header says.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for kv in f16 q8_0; do
  m=qwen3-8b:Q4_K_M tag=qwen3-8b-Q4_K_M-d4096-$kv
  row plain new $m tg128 "-p 16 -n 128 -d 4096 -r 1 --kv $kv"
  row traced new $m tg128 "-p 16 -n 128 -d 4096 -r 1 --kv $kv" CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so \
    BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 48 > $OUT/profile-$tag.md 2>&1
  head -16 $OUT/profile-$tag.md
done
echo "end t=$(el)"
