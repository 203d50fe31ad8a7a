#!/bin/bash
# next200 (carry .carry: bins q-- = wip/qkv-overlap bench + GPU tests; rtlib, stories260K): bash tools/wip/next200.sh SHA
# (timeout 560) -- Q + K and V launches overlapping in the PDL chain (cuda::GemvChain, BW24_QKV_OVERLAP=1): Q + K waits
# for the norm before it triggers, so V starts with its input complete and reads it without waiting, and waits only
# before it exits (flash decode's wait covers both). Q4_K_M's Q6_K attn_v is a launch of its own after Q + K (2.5 us a
# Qwen3-8B layer, next182's trace). Prediction: Qwen3-8B +2-4 %, Qwen3-30B-A3B +2-4 %, Qwen3.5-9B +0.5-1 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
export LD_LIBRARY_PATH=$PWD/build-q:$LD_LIBRARY_PATH
for v in 1; do
  BW24_QKV_OVERLAP=$v timeout 100 ./build-q/tests/bw24_model_tests "[gpu]" > /tmp/gt.txt 2>&1
  echo "overlap=$v GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" /tmp/gt.txt | head -3
  BW24_QKV_OVERLAP=$v timeout 120 ./build-q/tests/bw24_gpu_vs_cpu_tests "[gpu]" > /tmp/gv.txt 2>&1
  echo "overlap=$v GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|All tests|test cases" /tmp/gv.txt | head -5
done
for i in 1 2; do for v in 0 1; do for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row "overlap=$v" q $m tg128 "-p 16 -r 3" BW24_QKV_OVERLAP=$v; done; done; done
for v in 0 1; do row "overlap=$v" q qwen3.5-9b:Q4_K_M tg128 "-p 16 -r 3" BW24_QKV_OVERLAP=$v; done
for v in 0 1; do row "overlap=$v d4096" q qwen3-8b:Q4_K_M tg128 "-p 16 -d 4096 -r 2" BW24_QKV_OVERLAP=$v; done
for v in 0 1; do row "overlap=$v" q qwen3.6-35b-a3b:Q4_K_M tg128 "-p 16 -r 3" BW24_QKV_OVERLAP=$v; done
echo "end t=$(el)"
