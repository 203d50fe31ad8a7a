#!/bin/bash
# next105 (carry .carry only): bash tools/wip/next105.sh SHA  (timeout 480)
# new = wip/next-cursor SHA (89b61b9, on main 00c3b61), packed from its clean HEAD; base = main 00c3b61's bench.
# The change: the streamed GEMV's producer and consumers walk their items with a Cursor (row group, K chunk, ring slot,
# barrier phase stepped by compares) instead of i / chunks, i % chunks, i % stages, i / stages: two 32-bit divisions
# (~20 dependent instructions each) an item in the consumers' loop, ahead of their loads' addresses. The consumer loop
# of the BF16 store instance: 286 -> 240 instructions; static counts 1559 -> 1445 (BF16 store), 1924 -> 1841 (Q4_K
# store), 2085 -> 2001 (Q6_K store). Registers: F16 / BF16 and Q6_K unchanged, Q4_K / Q5_K 60-66 -> 62-64, no spills.
# Outputs: the same sums in the same order (kernel check bit-equal to the warp-per-row / multi-token kernels).
# Prediction: Qwen3-8B BF16 217 -> ~222 (+2 %, over the 220 target), Q4_K_M +1 %, Qwen3-30B-A3B +0.5 %.
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc_one $SHA gemv_q8_streamed gemv_q8_multi gemv_float gemv_float_multi
check_rows $SHA gemv_q8_streamed 'Q6_K'
gpu_tests $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for m in qwen3-8b:BF16 qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row base base $m tg128 "$A"; row new new $m tg128 "$A"; done; done
echo "t=$(el)"
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
js() { local m=$1 tag=$2; shift 2; [ $(el) -lt 400 ] && timeout 60 ./build-new/bw24-bench -m synthetic:$m $J "$@" \
  --json "$OUT/$SHA-${m/:/-}$tag-h200.json" | grep -E "tg128" | sed "s/^/$m$tag /"; }
js qwen3-8b:BF16 ""; js qwen3-8b:Q4_K_M ""; js qwen3-30b-a3b:Q4_K_M ""; js qwen3-8b:Q4_K_M -kv-q8_0 --kv q8_0
echo "end t=$(el)"
