#!/bin/bash
# next12 (run from branch wip/combo; carry .deps .carry):  bash tools/wip/next12.sh <sha>  (< 10 min)
# wip/combo = wip/l2-next (BW24_L2_NEXT=none|moe|o|all, BW24_L2_OWN=1; staging / expert-id order) + wip/expand-ahead
# (BW24_EXPAND_AHEAD=0 off) + wip/flash-kfirst (q and K round trips overlapped)
# beside main (.carry/main-src, refreshed from main before the call): checks and GPU tests with everything on,
# then decode and prefill A/B rows chosen by environment.
SHA=$1
source tools/wip/lib.sh
cfg .carry/main-src build-main main -DBW24_TESTS=OFF; cfg . build-new $SHA
( ninja -C build-main -j16 bw24-bench > /tmp/b1.log 2>&1 || grep -A3 error /tmp/b1.log | head -30 ) &
( ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30 ) &
wait; echo "built t=$(el)"
export BW24_L2_OWN=1
for f in moe gemv_q8_streamed; do timeout 100 ./build-new/bw24-kernel-check $f > "$OUT/kc-$f-$SHA.txt" 2>&1; echo "kernel-check $f (own) rc=$? $(tail -n 1 $OUT/kc-$f-$SHA.txt) t=$(el)"; grep -E "FAIL|rror" "$OUT/kc-$f-$SHA.txt" | head -8; done
timeout 90 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests (all on) rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -3
timeout 100 ./build-new/tests/bw24_gpu_vs_cpu_tests "[gpu]" > "$OUT/gpu-vs-cpu-$SHA.txt" 2>&1; echo "GPU vs CPU (all on) rc=$? t=$(el)"; grep -E "FAILED|passed|failed" "$OUT/gpu-vs-cpu-$SHA.txt" | head -3
unset BW24_L2_OWN
TG="-p 16 -n 128 -r 1 -d 0"; PP="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-8b:Q4_K_M qwen3-30b-a3b:Q4_K_M; do
  row main main $m tg128 "$TG"; row none new $m tg128 "$TG" BW24_L2_NEXT=none; row next new $m tg128 "$TG"
  row own+next new $m tg128 "$TG" BW24_L2_OWN=1
  echo "t=$(el)"
done
D4="-p 16 -n 128 -r 1 -d 4096"
row main main qwen3-8b:Q4_K_M tg128 "$D4"; row none new qwen3-8b:Q4_K_M tg128 "$D4" BW24_L2_NEXT=none
row main main qwen3-8b:Q4_K_M pp512 "$PP"; row ahead new qwen3-8b:Q4_K_M pp512 "$PP"; row inline new qwen3-8b:Q4_K_M pp512 "$PP" BW24_EXPAND_AHEAD=0
echo "t=$(el)"; [ $(el) -lt 500 ] && { row own new qwen3-8b:Q4_K_M tg128 "$TG" BW24_L2_OWN=1 BW24_L2_NEXT=none; row main main qwen3-8b:BF16 tg128 "$TG"; row own new qwen3-8b:BF16 tg128 "$TG" BW24_L2_OWN=1; }
echo "t=$(el)"; [ $(el) -lt 530 ] && { row main main qwen3.5-9b:Q4_K_M pp512 "$PP"; row ahead new qwen3.5-9b:Q4_K_M pp512 "$PP"; }
echo "end t=$(el)"
