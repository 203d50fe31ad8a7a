#!/bin/bash
# next63 (carry .carry only):  bash tools/wip/next63.sh <sha>  (< 8 min; timeout_s 560)
# new = wip/k4-regs (main d25021f + the Q4_K one-token int8 dot decoding its scales from the head's registers:
# no 64-byte local-memory copy of each block head; ptxas: the routed gate-up 60 -> 64 registers, stack 64 -> 0);
# base = main d25021f.
# 1. Kernel check gemv_q8 (every family with that name: plain, multi, streamed) and moe (routed launches, the
#    combine), GPU tests.
# 2. Prediction (ncu of next62: the routed gate-up 12.3 us for 14.2 MB, 8.6 of 16.7 cycles between issues on L1TEX,
#    the head's local copy after every weight load): the gate-up ~12 -> ~8 us, the Q4_K combining down (half the
#    layers) ~1 us less: Qwen3-30B-A3B 385 -> ~410 (+5 %), Qwen3.6-35B-A3B ~386 -> ~400. ncu of the new gate-up.
# 3. The acceptance JSON of new for every model row (all files into json-SHA.tgz).
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA gemv_q8 moe; cat "$OUT/kc-moe-$SHA.txt" >> "$OUT/kc-gemv_q8-$SHA.txt"; rm "$OUT/kc-moe-$SHA.txt"
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 100 $ncu --clock-control none -k regex:"gemv_q8_kernel|gemv_q8_combine" --launch-skip 400 --launch-count 2 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  ./build-new/bw24-bench -m synthetic:qwen3-30b-a3b:Q4_K_M -p 16 -n 64 -r 1 -d 0 --device 0 > "$OUT/ncu-moe-$SHA.txt" 2>&1
echo "ncu rc=$? t=$(el)"; grep -E "gemv_q8|Duration|DRAM Throughput|Registers Per|Warp Cycles Per Issued" \
  "$OUT/ncu-moe-$SHA.txt" | head -20
mkdir -p /tmp/json
for m in qwen3-8b:Q4_K_M qwen3-8b:Q8_0 qwen3-8b:BF16 qwen3.5-9b:Q4_K_M qwen3.5-9b:Q8_0 qwen3-30b-a3b:Q4_K_M \
    qwen3.6-35b-a3b:Q4_K_M; do [ $(el) -lt 500 ] &&
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "/tmp/json/${m//:/-}-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
tar -czf "$OUT/json-$SHA.tgz" -C /tmp/json .
echo "end t=$(el)"
