#!/bin/bash
# next69 (carry .carry only):  bash tools/wip/next69.sh  (timeout_s 480)
# new = wip/head-split f940b3a (flash decode head groups; kernel check and GPU tests passed in next68).
# diag1/2/3 = f940b3a with flash decode's pre-wait RoPE constants cut (wrong outputs, timing only): 1 no angles (no
# inv_freq load, no double sincos), 2 also no q/k norm weights, 3 inv_freq loaded but no sincos.
# Why: after head groups flash decode still costs ~7 us a layer in the graph for ~2 us of dependent work after its
# wait; its CTAs (111 registers x 256 threads) do not fit beside three streamed-GEMV CTAs (72 x 288 each, 62 K of 64 K
# registers), so they start as the Q/K/V GEMV drains and their pre-wait work (norm weights and inv_freq from DRAM, two
# double sincos a lane) is on the chain.
# Also the acceptance JSON rows head groups move (q8_0-KV depth ratio, 9B, 35B-A3B, 27B).
source tools/wip/lib.sh
begin next69
P="-p 16 -n 128 -r 3 -d 0"
for b in new diag1 diag2 diag3 new diag1; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for b in new diag1 diag3; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
timeout 80 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M $J --kv q8_0 --json "$OUT/f940b3a-qwen3-8b-Q4_K_M-kvq8_0-h200.json" | grep -E "tg128"; echo "t=$(el)"
for m in qwen3.5-9b qwen3.6-35b-a3b qwen3.5-27b; do [ $(el) -lt 400 ] && timeout 90 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M $J \
  --json "$OUT/f940b3a-$m-Q4_K_M-h200.json" | grep -E "tg128|pp512"; echo "t=$(el)"; done
echo "end t=$(el)"
