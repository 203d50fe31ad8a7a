#!/bin/bash
# next136 (carry .carry only): bash tools/wip/next136.sh SHA  (timeout 480) -- round 23's next133, trimmed, on main f857226.
# new = wip/q80-tiles 5b5960f (tools/wip/patches/q80-tiles.patch on f857226, its q6k_tiles.cuh conflict resolved to
# kQ6_K): Q8_0 planes cut by tiles, and the timing hook BW24_STREAM_ALL_SLOTS=1 (the downs on every slot).
# main = d4e0085's bench (device code = f857226). Predictions as next133: Q8_0 models +1-3 %, Q4_K_M unchanged;
# the hook +1-2 % on Qwen3-8B / Qwen3.5-9B Q4_K_M if the downs' first fill bounds them. Also a second JSON sample of
# the landed build's q8_0-KV depth ratio (round 24: 90.6 %).
SHA=$1
source tools/wip/lib.sh
begin $SHA
timeout 60 ./build-main/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --kv q8_0 \
  --json "$OUT/f857226-qwen3-8b-Q4_K_M-q8kv-2-h200.json" | grep -E "tg128" | sed "s/^/main q8kv /"
kc_one $SHA gemv_q8_streamed dequant gemm moe
gpu_tests $SHA
for i in 1 2; do for b in main new; do for m in qwen3-8b:Q8_0 qwen3.5-9b:Q8_0 qwen3-8b:Q4_K_M; do
  [ $(el) -lt 330 ] && row $b $b $m tg128 "-p 16 -n 128 -r 3"; done; done; done
for i in 1 2; do for m in qwen3-8b:Q4_K_M qwen3.5-9b:Q4_K_M; do
  [ $(el) -lt 380 ] && row new-all-slots new $m tg128 "-p 16 -n 128 -r 3" BW24_STREAM_ALL_SLOTS=1; done; done
for b in main new; do [ $(el) -lt 400 ] && row $b $b qwen3-8b:Q8_0 pp512 "-p 512 -n 0 -r 2"; done
echo "end t=$(el)"
