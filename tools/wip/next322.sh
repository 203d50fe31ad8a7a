#!/bin/bash
# next322 (round 58): main 4dee2b3 (the split order reversed where a merge follows) checked: GPU model tests, GPU vs
# CPU, kernel check attention, the acceptance JSONs; then branch wip/split-order's BW24_SPLIT_ORDER (0 the landed
# form, 1 newest visible split first and the key-less ones last everywhere, 2 the same where a merge follows) in one
# binary, with its kernel check at 1. Pack: bash tools/wip/pack-bins.sh new HEAD bw24-bench tests/bw24_model_tests
# tests/bw24_gpu_vs_cpu_tests bw24-kernel-check (main), and exp from the branch (bw24-bench bw24-kernel-check).
SHA=$1
source tools/wip/lib.sh
begin $SHA-checks-order
main_checks $SHA
A="-p 512 -n 128 -d 4096 -r 2"
for i in 1 2; do for o in 0 1 2; do row o$o exp qwen3-8b:Q4_K_M tg128 "$A" BW24_SPLIT_ORDER=$o; done; done
for o in 0 1 2; do row o$o-q8 exp qwen3-8b:Q4_K_M tg128 "$A --kv q8_0" BW24_SPLIT_ORDER=$o; done
for i in 1 2; do for o in 0 1; do row o$o-d0 exp qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2" BW24_SPLIT_ORDER=$o; done; done
for o in 0 1 2; do row o$o exp qwen3-30b-a3b:Q4_K_M tg128 "$A" BW24_SPLIT_ORDER=$o; done
export BW24_SPLIT_ORDER=1; KC_BUILD=exp kc exp-order1 attention; unset BW24_SPLIT_ORDER
echo "end t=$(el)"
