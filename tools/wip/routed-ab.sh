#!/bin/bash
# The routed-GEMV A/B of round 6 (run from the candidate's tree; carry .deps .carry with .carry/main-src):
#   bash tools/wip/routed-ab.sh SHA
# Builds main (.carry/main-src) beside this tree, then: kernel check moe, Qwen3-30B-A3B tg128 rows twice,
# Qwen3.6-35B-A3B rows, GPU tests, acceptance JSON and an ncu of the routed GEMVs while the time lasts.
# Knobs (environment): LB5=1 also builds .carry/routed-lb-src at 5 CTAs a SM and adds its rows;
# MAIN35=0 skips main's 35B row; JSON_SHAPES (default both shapes); LIMIT (seconds, default 580), JSON_UNTIL
# and NCU_UNTIL (start those steps only before these seconds; default LIMIT - 110, LIMIT - 80); NCU_COUNT
# (routed launches profiled, default 4).
SHA=$1
source tools/wip/lib.sh
LIMIT=${LIMIT:-580}; JSON_UNTIL=${JSON_UNTIL:-$((LIMIT - 110))}; NCU_UNTIL=${NCU_UNTIL:-$((LIMIT - 80))}; NCU_COUNT=${NCU_COUNT:-4}; JSON_SHAPES=${JSON_SHAPES:-"qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M"}
builds="main new"
cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $SHA
if [ "${LB5:-0}" = 1 ]; then
  ln -sfn $PWD/tests/data .carry/routed-lb-src/tests/data
  cfg .carry/routed-lb-src build-lb5 lb5 -DBW24_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DBW24_ROUTED_CTAS=5
  ( ninja -C build-lb5 -j16 bw24-bench > /tmp/b3.log 2>&1 || grep -A3 error /tmp/b3.log | head -30 ) &
  builds="main new lb5"
fi
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
wait; echo "built t=$(el)"
timeout 100 ./build-new/bw24-kernel-check moe > "$OUT/kc-moe-$SHA.txt" 2>&1; echo "kernel-check moe rc=$? $(tail -n 1 $OUT/kc-moe-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-moe-$SHA.txt" | head -12
TG="-p 16 -n 128 -d 0 -r 1"
for r in 1 2; do for b in $builds; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$TG"; done; done
[ "${MAIN35:-1}" = 1 ] && row main main qwen3.6-35b-a3b:Q4_K_M tg128 "$TG"; row new new qwen3.6-35b-a3b:Q4_K_M tg128 "$TG"
echo "rows t=$(el)"
timeout 90 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 100 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-$SHA.txt" | head -3
for sq in $JSON_SHAPES; do
  [ $(el) -lt $JSON_UNTIL ] || break
  timeout $((LIMIT - $(el))) ./build-new/bw24-bench -m synthetic:$sq -p 512 -n 128 -d 0,4096 -r 2 --device 0 --json $OUT/2026-11-30-$SHA-${sq/:/-}-h200.json 2>&1 | grep "^| synth"; echo "json t=$(el)"
done
if [ $(el) -lt $NCU_UNTIL ]; then
  timeout $((LIMIT - $(el))) ncu --clock-control none --kernel-name regex:gemv_q8_kernel --launch-skip 100 --launch-count $NCU_COUNT --section SpeedOfLight --section Occupancy --section LaunchStats \
    ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 8 -r 1 --device 0 > $OUT/ncu-routed-$SHA.txt 2>&1; echo "ncu rc=$?"
  grep -E "gemv_q8_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size" $OUT/ncu-routed-$SHA.txt | cut -c1-150 | head -30
fi
echo "end t=$(el)"
