#!/bin/bash
# next258 (round 45; next257 with read_token's store): branch wip/unrolled 9af6237 = store_step_next's stop loop
# unrolled (no stack frame) + read_token's token stored into pinned memory by the kernel (no 4-byte copy on the serial
# path), against main 37f6592's bench (base). Carry .carry (base-- bench; new-- bench, model tests, GPU-vs-CPU tests,
# libbw24): GPU tests, tg128 of the four shapes base / new alternated (two rounds), and the serial path
# (BW24_RUN_AHEAD=0) of Qwen3-8B base / new (two rounds).
# Prediction: unrolled 0.5-0.8 us a step (+0.05-0.1 %, noise); serial 2-3 us a step (+0.3-0.5 % of the serial rows).
SHA=$1
source tools/wip/lib.sh
begin $SHA-ab
gpu_tests $SHA
ab "-p 16 -n 128 -r 2" qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M
for i in 1 2; do for b in base new; do row "serial $b" $b qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 2" BW24_RUN_AHEAD=0; done; done
echo "end t=$(el)"
