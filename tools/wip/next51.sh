#!/bin/bash
# next51 (carry .deps .carry; no build on the device):  bash tools/wip/next51.sh <sha>  (< 7 min; console in $OUT)
# Before the call, here: .carry/bins/{bench-main,bench-new,kc-new}.xz = bw24-bench of main (5bd9f57) and bw24-bench /
# bw24-kernel-check of wip/q8depth, built on the 2-core machine (ccache; a cold device build of two trees took > 9 min).
# new = the legacy warp-per-row GEMV's one-matrix launches with 4 blocks a lane in flight (was 2): Q8_0 47 -> 62
# registers (5 -> 4 CTAs an SM), the down projection's 6 dependent rounds a row -> 3, QKV / O 2 -> 1.
# Prediction: Qwen3-8B Q8_0 307 -> ~320. Then main's in-graph ablation of a Q8_0 step, ncu of the Q8_0 / BF16 GEMVs.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
mkdir -p build-main build-new
python3 -c 'import lzma, sys
for s, d in zip(sys.argv[1::2], sys.argv[2::2]): open(d, "wb").write(lzma.open(s).read())' .carry/bins/bench-main.xz \
  build-main/bw24-bench .carry/bins/bench-new.xz build-new/bw24-bench .carry/bins/kc-new.xz build-new/bw24-kernel-check
chmod +x build-*/bw24-*; echo "unpacked t=$(el)"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
kc $SHA gemv_q8 gemv_q8_multi
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in main new; do row $b $b qwen3-8b:Q8_0 tg128 "$P"; done; done; echo "t=$(el)"
for b in main new; do row $b $b qwen3.5-9b:Q8_0 tg128 "$P"; done; echo "t=$(el)"
[ $(el) -lt 200 ] && timeout 60 ./build-new/bw24-bench -m synthetic:qwen3-8b:Q8_0 -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
  --json "$OUT/qwen3-8b-q8_0-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"
echo "t=$(el)"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
[ $(el) -lt 240 ] && timeout 50 $NCU $S -k regex:gemv_q8_kernel --launch-skip 400 --launch-count 4 \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:Q8_0 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-q8_0-$SHA.txt" 2>&1
echo "ncu q8_0 rc=$? t=$(el)"
for p in none gateup down qkv o attn norm; do [ $(el) -lt 330 ] && row "ablate-$p" main qwen3-8b:Q8_0 tg128 "$P" BW24_ABLATE=$p; done
echo "t=$(el)"
[ $(el) -lt 340 ] && timeout 45 $NCU $S -k regex:gemv_stream_kernel --launch-skip 400 --launch-count 4 \
  ./build-main/bw24-bench -m synthetic:qwen3-8b:BF16 -p 16 -n 8 -r 1 --device 0 > "$OUT/ncu-bf16-$SHA.txt" 2>&1
echo "ncu bf16 rc=$? t=$(el)"
grep -E "  gemv_|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Block Limit Reg" "$OUT"/ncu-*-$SHA.txt | head -60
echo "end t=$(el)"
