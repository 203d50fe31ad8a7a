#!/bin/bash
# next32 (branch wip/mmq2 = wip/combo10 + the superblock-wide int8 grouped GEMM; carry .deps .carry with
# .carry/main-src refreshed from main):  bash tools/wip/next32.sh <sha>  (< 9 min; a superset of next30)
# Four prepared prefill changes beside main in one call, each with its own kernel-check family:
#  - wip/q8-lean (gemm_grouped_q8 per-32 rows): the per-sub-block kernel's copies planned once per thread
#  - the superblock-wide kernel (gemm_grouped_q8 per256 rows, rmsnorm_q8 per256): Q4_K, sub-block scales as
#    integer multiply-adds, the min term in 3xTF32 MMAs (tools/emulate/q8s_fragments.py checks its fragments)
#  - wip/moe-group (moe): moe_group from 8 warps;  - wip/flash-pipe (flash_prefill): f16 tiles one key tile ahead
# Microbench gemm_grouped/2 (per-sub-block), /3 (Q6_K), /4 (superblock-wide). If the per256 rows fail, the pp512
# rows are not valid for landing: run next30 on wip/combo10 (the other three) instead.
# Predictions: gate-up 305 -> ~260 (/2) -> ~150 us (/4); Qwen3-30B-A3B pp512 12.1k -> 15-17k; 8B Q4_K_M +3-4 %.
SHA=$1
source tools/wip/lib.sh
build_ab $SHA bw24-kernel-check bw24-microbench bw24_model_tests bw24_gpu_vs_cpu_tests
kc $SHA rmsnorm_q8 gemm_grouped gemm_grouped_q8 moe flash_prefill
timeout 50 ./build-new/bw24-microbench --benchmark_filter='gemm_grouped/[2345]/' 2>&1 | grep gemm_grouped/ | sed -E 's/ +/ /g' | cut -c1-130
gpu_tests $SHA; grep -E "qwen3moe" "$OUT/gpu-tests-$SHA.txt" | cut -c1-160
P="-p 512 -n 16 -r 2 -d 0"
for m in qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M qwen3-8b:Q4_K_M; do row main main $m pp512 "$P"; row new new $m pp512 "$P"; done
echo "rows t=$(el)"
for m in qwen3-30b-a3b:Q4_K_M qwen3-8b:BF16; do [ $(el) -lt 480 ] || break
  f=$(echo $m | tr ':A-Z' '-a-z'); timeout 90 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$f-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
