#!/bin/bash
# next24 (main after the round-8 landing; carry .deps .carry):  bash tools/wip/next24.sh <sha>  (< 9 min)
# The landed code checked and measured: kernel checks, GPU tests, acceptance JSON of the four shapes,
# the 8B Q8_0 / BF16 rows; then the int8 grouped GEMM at one CTA a SM (.carry/q8b-src: launch bounds
# (256, 1), no register cap, no spills) against the landed two CTAs a SM, and the dense pick's rows.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA; cfg .carry/q8b-src build-q8b q8b -DBW24_TESTS=OFF
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
( ninja -C build-q8b -j16 bw24-microbench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
wait; echo "built t=$(el)"
kc $SHA gemm gemm_grouped flash_prefill moe
gpu_tests $SHA; grep -E "qwen3moe" "$OUT/gpu-tests-$SHA.txt" | cut -c1-150
for m in qwen3-8b qwen3-30b-a3b qwen3.5-9b qwen3.6-35b-a3b; do [ $(el) -lt 400 ] || break
  timeout 90 ./build-new/bw24-bench -m synthetic:$m:Q4_K_M -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json "$OUT/$m-q4_k_m-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; echo "t=$(el)"; done
P="-p 512 -n 16 -r 2 -d 0"
[ $(el) -lt 440 ] && for q in Q8_0 BF16; do row new new qwen3-8b:$q pp512 "$P"; row new new qwen3-8b:$q tg128 "-p 16 -n 128 -r 1 -d 0"; done
echo "rows t=$(el)"
M="$OUT/micro-$SHA.txt"
for b in new q8b; do [ $(el) -lt 500 ] || break; echo "== build-$b" >> $M
  timeout 40 ./build-$b/bw24-microbench --benchmark_filter='gemm_grouped/2/' >> $M 2>&1; echo "micro $b rc=$? t=$(el)"; done
[ $(el) -lt 520 ] && { echo "== build-new gemm_bf16 pick" >> $M; timeout 50 ./build-new/bw24-microbench --benchmark_filter='gemm_bf16/[0-9]+/[0-9]+/[0-9]+/(-1|8)/' >> $M 2>&1; echo "micro bf16 rc=$? t=$(el)"; }
grep -E "gemm_grouped/|gemm_bf16/|==" $M | sed -E 's/ +/ /g' | cut -c1-140
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
