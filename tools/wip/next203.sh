#!/bin/bash
# next203 (prepared in round 34, not run; carry .carry): bash tools/wip/next203.sh SHA (timeout 480) -- why the Q + K /
# V overlap (cuda::GemvChain) gave Qwen3-30B-A3B +2.5 % and Qwen3-8B +0.2 % at depth 0: both steps traced with the
# overlap off and on (tools/trace), the layer rows of each profile side by side. Expected: the 8B's V segment
# (2.5 us a layer in next182) either gone with nothing gained elsewhere (then flash decode or the norm lost it back),
# or still there (then V's CTAs did not start beside Q + K's: no room on the SMs).
# Pack from main (clean tree): tools/wip/pack-bins.sh new HEAD bw24-bench; then
#   ninja -C build-pack/$(git rev-parse --short HEAD) bw24-kernel-trace && mkdir -p .carry/trace &&
#   cp build-pack/$(git rev-parse --short HEAD)/libbw24-kernel-trace.so /usr/local/cuda/lib64/libcupti.so.13 \
#      tools/trace/step_profile.py .carry/trace/
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.carry/trace
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do for v in 0 1; do
  tag=${m/:/-}-overlap$v
  row "plain overlap=$v" new $m tg128 "-p 16 -n 128 -r 1" BW24_QKV_OVERLAP=$v
  row "traced overlap=$v" new $m tg128 "-p 16 -n 128 -r 1" BW24_QKV_OVERLAP=$v \
    CUDA_INJECTION64_PATH=$PWD/.carry/trace/libbw24-kernel-trace.so BW24_KERNEL_TRACE=/tmp/trace-$tag.csv
  python3 .carry/trace/step_profile.py /tmp/trace-$tag.csv --steps 100 --layer-rows 24 > $OUT/profile-$tag.md 2>&1
  head -14 $OUT/profile-$tag.md; sed -n '/| pos |/,$p' $OUT/profile-$tag.md | sed -n 3,14p
done; done
echo "end t=$(el)"
