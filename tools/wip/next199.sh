#!/bin/bash
# next199 (carry .carry: bins m--bw24-bench = main 6428a95's code (built as c709c8f), a--bw24-bench = wip/down-ahead,
# t--tests = main 6428a95's GPU tests; rtlib, stories260K): bash tools/wip/next199.sh SHA  (timeout 560)
# 1. GPU tests of main 6428a95 (the rope table). 2. The routed gate-up prefetching the down projection's experts into
# L2 (BW24_MOE_DOWN_AHEAD: 0 off, 1 before its dot, 2 after): the routed down launch cannot load before its wait, and
# ran 8.4 us (Q6_K) / 5.2 us (Q4_K) a Qwen3-30B-A3B layer for 10 / 7 MB (next189's trace). Prediction: +3-8 % on
# Qwen3-30B-A3B and Qwen3.6-35B-A3B tg128. 3. Acceptance JSON rows on main's bench.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$PWD/build-t:$LD_LIBRARY_PATH
timeout 100 ./build-t/tests/bw24_model_tests "[gpu]" > /tmp/gt.txt 2>&1
echo "main GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" /tmp/gt.txt | head -3
timeout 120 ./build-t/tests/bw24_gpu_vs_cpu_tests "[gpu]" > /tmp/gv.txt 2>&1
echo "main GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" /tmp/gv.txt | head -5
for i in 1 2; do for v in 0 1 2; do
  row "ahead=$v" a qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -r 3" BW24_MOE_DOWN_AHEAD=$v; done; done
for v in 0 1 2; do row "ahead=$v" a qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -r 3" BW24_MOE_DOWN_AHEAD=$v; done
for v in 0 1 2; do row "ahead=$v d4096" a qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_MOE_DOWN_AHEAD=$v; done
echo "ab t=$(el)"
JSON_BUILD=m json $SHA 420 qwen3-8b:Q4_K_M ""
JSON_BUILD=m json $SHA 440 qwen3-8b:Q4_K_M -q8kv --kv q8_0
JSON_BUILD=m json $SHA 460 qwen3-30b-a3b:Q4_K_M ""
JSON_BUILD=m json $SHA 480 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
