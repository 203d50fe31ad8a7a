#!/bin/bash
# next49 (main 5bd9f57; carry .deps .carry):  bash tools/wip/next49.sh <sha>  (< 9 min)
# 1. The two commits of round 11 not yet run on a GPU (9f7d1bd: the streamed GEMV's smem opt-in per device; 5bd9f57:
#    moe_combine_value one form): kernel check moe, gemv_q8_streamed, gemv_float; GPU tests.
# 2. Where a token's time goes inside the graph now (BW24_ABLATE, round 3's table redone on main): Qwen3-8B Q4_K_M,
#    Q8_0, BF16, Qwen3-30B-A3B.
# 3. ncu sections of the Q8_0 warp-per-row GEMVs and the BF16 streamed ones (why 2.7 TB/s).
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA
ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b.log 2>&1 ||
  { grep -A3 error /tmp/b.log | head -30; exit 1; }
echo "built t=$(el)"
kc $SHA moe gemv_q8_streamed gemv_float
gpu_tests $SHA
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
ab() { local m=$1; shift; for p in none "$@"; do row "$p" new $m tg128 "$P" BW24_ABLATE=$p; done; echo "t=$(el)"; }
ab qwen3-8b:Q4_K_M norm qkv attn o gateup down lmhead
ab qwen3-8b:Q8_0 norm qkv attn o gateup down lmhead
ab qwen3-8b:BF16 qkv attn o gateup down
ab qwen3-30b-a3b:Q4_K_M moe attn norm
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
[ $(el) -lt 420 ] && timeout 70 $NCU $S -k regex:gemv_q8_kernel --launch-skip 400 --launch-count 4 \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:Q8_0 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-q8_0-$SHA.txt" 2>&1
echo "ncu q8_0 rc=$? t=$(el)"
[ $(el) -lt 480 ] && timeout 60 $NCU $S -k regex:gemv_stream_kernel --launch-skip 400 --launch-count 4 \
  ./build-new/bw24-bench -m synthetic:qwen3-8b:BF16 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-bf16-$SHA.txt" 2>&1
echo "ncu bf16 rc=$? t=$(el)"
grep -E "gemv_|DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Registers Per|Theoretical Occ|Block Limit" "$OUT"/ncu-*-$SHA.txt | head -80
echo "end t=$(el)"
