#!/bin/bash
# next33 (branch wip/fdec; carry .deps .carry with .carry/main-src refreshed from main):  bash tools/wip/next33.sh <sha>  (< 6 min)
# Flash decode at depth: the split's K and V rows prefetched into L2 before the PDL wait, and a merge kernel of
# 8 warps (32 splits' loads in flight a CTA, (M, L) per warp) where a thread per element walked the splits.
# Kernel check attention (new cases: D 128 at 4200, D 256 at 2100, two tokens), microbench flash_decode main vs
# new, GPU tests, tg128 rows at depth 0 / 4096 main vs new, JSON of Qwen3-8B Q4_K_M.
# Predictions (nsys, 06367c5: split 18.7 us + merge 8.8 us a Qwen3-8B layer at 4096): merge ~3 us, split ~14 us;
# Qwen3-8B Q4_K_M tg128 at 4096 324 -> ~345 (ratio 82.6 % -> ~88 %, target 85 %); depth 0 unchanged.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
( ninja -C build-main -j8 bw24-microbench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head ) &
kc $SHA attention
wait
for b in main new; do timeout 60 ./build-$b/bw24-microbench --benchmark_filter='flash_decode' 2>&1 | grep flash_decode/ |
  sed -E 's/ +/ /g' | cut -c1-90 | sed "s/^/$b /"; done
gpu_tests $SHA
P="-p 16 -n 128 -r 2 -d 0,4096"
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do row main main $m tg128 "$P"; row new new $m tg128 "$P"; done
row main main qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"; row new new qwen3-8b:Q4_K_M tg128 "$P --kv q8_0"
echo "rows t=$(el)"
[ $(el) -lt 450 ] && timeout 90 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
