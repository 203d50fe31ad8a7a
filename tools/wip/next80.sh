#!/bin/bash
# next80 (carry .carry only):  bash tools/wip/next80.sh  (timeout_s 100)
# The depth ratios sit at their bars within the run-to-run spread (next78 ffff370: 84.6 % / 89.4 %; next79 bd9b9e3:
# 84.1 % / 90.2 %): a second JSON sample of each build, f16 and q8_0, alternated.
source tools/wip/lib.sh
begin next80
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
for b in g4 new; do for kv in f16 q8_0; do [ $(el) -lt 75 ] && timeout 30 ./build-$b/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J --kv $kv \
  --json "$OUT/$b-qwen3-8b-Q4_K_M-kv-$kv-sample2-h200.json" | grep tg128 | sed "s/^/$b /"; done; done
echo "end t=$(el)"
