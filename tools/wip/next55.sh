#!/bin/bash
# next55 (carry .carry only):  bash tools/wip/next55.sh <sha>  (timeout_s 560)
# new = wip/gdn-decode (main 35b970d + gdn_decode: the delta net's conv, recurrence and the out_proj's int8 input in
# one launch, the conv history / state / taps read before the PDL wait); base = main 35b970d (grid2 + cluster argmax).
# 1. Kernel check gdn (gdn_decode bit-equal to conv + step + rmsnorm_q8, twice in a row; refusals); GPU tests (the
#    fused-launches test now also turns fused_delta_net off: logits bit-identical on tiny-qwen35 / tiny-qwen35moe).
# 2. Prediction: Qwen3.5-9B Q4_K_M tg128 407 -> ~425 (two launch boundaries and the state read before the wait,
#    ~4 us a layer x 24 delta-net layers of a 2.45 ms step); Q8_0 and Qwen3.6-35B-A3B (30 delta-net layers) alike.
# 3. The cluster argmax's kernel time (ncu; the one-CTA kernel took 11.3-11.5 us, rounds 11 and 13).
# 4. JSON rows of the new code for the acceptance table: 9B Q4_K_M, 9B Q8_0, 35B-A3B.
# Packing (here, on wip/gdn-decode): pack-bins.sh gd HEAD bw24-bench bw24-kernel-check tests/bw24_model_tests
#   tests/bw24_gpu_vs_cpu_tests libbw24.so.0, renamed new--*; git checkout main && pack-bins.sh base HEAD.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA gdn
gpu_tests $SHA
grep -E "gdn_decode" "$OUT/kc-gdn-$SHA.txt" | head -20
P="-p 16 -n 128 -r 3 -d 0"
for i in 1 2; do for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3.5-9b:Q8_0 tg128 "$P"; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 60 $ncu --metrics gpu__time_duration.sum -k regex:argmax --launch-count 3 ./build-new/bw24-bench \
  -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 4 -r 1 --device 0 2>&1 | grep -E "argmax|gpu__time" | head -6; echo "t=$(el)"
for m in qwen3.5-9b:Q4_K_M qwen3.5-9b:Q8_0 qwen3.6-35b-a3b:Q4_K_M; do [ $(el) -lt 430 ] &&
  timeout 100 ./build-new/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/${m//:/-}-$SHA.json" 2>&1 | grep -E "pp512|tg128|rror"; done
echo "end t=$(el)"
