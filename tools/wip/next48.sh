#!/bin/bash
# next48 (branch wip/split; carry .deps .carry):  bash tools/wip/next48.sh <sha>  (< 7.5 min)
# Before the call, here: .carry/main-src = git archive main (cd475a1), stories260K files in .carry.
# new = the streamed GEMV's balanced split (GemvSplit): CTAs take an even share of the (row group, K chunk) items, a
# row group cut between two CTAs meets in a scratch. next47's serialized per-kernel times showed the downs at 1.65-1.83
# TB/s (4096 x 12288: 512 row groups of 3 chunks on 396 CTAs, so 116 CTAs take two groups: the launch lasts two
# groups' time for 1.29 groups of average work). Prediction: downs and O ~20-30 % faster: Qwen3-8B Q4_K_M 404 -> ~430.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA gemv_q8_streamed gemv_float
grep -E "4096 x 12288|8192 x 4096" "$OUT/kc-gemv_q8_streamed-$SHA.txt" | head -12
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for m in qwen3.5-9b:Q4_K_M qwen3-8b:BF16 qwen3-30b-a3b:Q4_K_M; do [ $(el) -lt 330 ] || break
  for b in main new; do row $b $b $m tg128 "$P"; done; echo "t=$(el)"; done
[ $(el) -lt 360 ] && timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "end t=$(el)"
