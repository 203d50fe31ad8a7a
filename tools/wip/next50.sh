#!/bin/bash
# next50 (branch wip/q8depth; carry .deps .carry):  bash tools/wip/next50.sh <sha>  (< 8 min; console in $OUT)
# Before the call, here: .carry/main-src = git archive main (5bd9f57), stories260K files in .carry.
# new = the legacy warp-per-row GEMV's one-matrix launches with 4 blocks a lane in flight (was 2): Q8_0 47 -> 62
# registers (5 -> 4 CTAs an SM), the down projection's 6 dependent rounds a row -> 3, QKV / O 2 -> 1.
# Prediction: the Q8_0 rows (down, O, QKV ~60 % of a Q8_0 step's GEMV bytes) +4-8 %: Qwen3-8B Q8_0 307 -> ~320.
# Then main's in-graph ablation of a Q8_0 step and ncu sections of the Q8_0 and BF16 GEMVs.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
build_ab $SHA bw24-kernel-check
kc $SHA gemv_q8
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q8_0 tg128 "$P"; done; done; echo "t=$(el)"
for b in main new; do row $b $b qwen3.5-9b:Q8_0 tg128 "$P"; done; echo "t=$(el)"
for p in none gateup down qkv o attn norm; do [ $(el) -lt 330 ] && row "ablate-$p" main qwen3-8b:Q8_0 tg128 "$P" BW24_ABLATE=$p; done
echo "t=$(el)"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
[ $(el) -lt 370 ] && timeout 50 $NCU $S -k regex:gemv_q8_kernel --launch-skip 400 --launch-count 4 \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:Q8_0 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-q8_0-$SHA.txt" 2>&1
echo "ncu q8_0 rc=$? t=$(el)"
[ $(el) -lt 420 ] && timeout 50 $NCU $S -k regex:gemv_stream_kernel --launch-skip 400 --launch-count 4 \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:BF16 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-bf16-$SHA.txt" 2>&1
echo "ncu bf16 rc=$? t=$(el)"
grep -E "  gemv_|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Block Limit Reg" "$OUT"/ncu-*-$SHA.txt | head -60
echo "end t=$(el)"
