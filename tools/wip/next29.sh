#!/bin/bash
# next29 (main; carry .deps .carry):  bash tools/wip/next29.sh <sha>  (< 8 min)
# Where a Qwen3-30B-A3B pp512 pass and a decode step go now (per-kernel GPU time, kernels serialized):
# qwen3-8b Q4_K_M at depth 0 and 4096 (the 85 % ratio), qwen3-30b-a3b and qwen3-8b Q8_0 at depth 0. The data for the tg128 rows.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA -DBW24_TESTS=OFF
ninja -C build-new -j16 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
# spec SHAPE:QUANT:DEPTH:PROMPT:TOKENS. First the Qwen3-30B-A3B pp512 pass (its target is the one prefill row
# left), then decode (-p 16 -n 4), 4096 last: its fill passes add prefill kernels (read the split / merge rows).
for spec in qwen3-30b-a3b:Q4_K_M:0:512:1 qwen3-8b:Q4_K_M:0:16:4 qwen3-30b-a3b:Q4_K_M:0:16:4 qwen3-8b:Q8_0:0:16:4 \
            qwen3-8b:Q4_K_M:4096:16:4; do
  [ $(el) -lt 420 ] || break
  IFS=: read -r shape quant d np nn <<< "$spec"
  m=$shape-$quant-d$d-p$np
  B="./build-new/bw24-bench -m synthetic:$shape:$quant -p $np -n $nn -r 1 -d $d --device 0"
  breakdown $m $SHA $B
done
echo "end t=$(el)"
