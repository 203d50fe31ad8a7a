#!/bin/bash
# next31 (main or what landed; carry .deps .carry):  bash tools/wip/next31.sh <sha>  (< 6 min)
# Acceptance JSON of the current code for the rows not rerun since round 8's last commits: Qwen3-8B BF16, Q4_K_M,
# Q8_0 (pp512 / tg128 at depth 0 and 4096), Qwen3.5-9B Q8_0 (tg128 target 375; last measured at 19357a0) and the
# Qwen3.5-27B shape (rows recorded for issue 5).
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA -DBW24_TESTS=OFF
ninja -C build-new -j16 bw24-bench > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
for m in qwen3-8b:BF16 qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3.5-9b:Q8_0 qwen3.5-27b:Q4_K_M; do [ $(el) -lt 480 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z')
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$f-$SHA.json" 2>&1 |
    grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
echo "end t=$(el)"
