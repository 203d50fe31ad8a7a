#!/bin/bash
# next384 (round 69): main with the lean instances (8e19d4d, packed from build-dev: bench, kernel check, both GPU test
# programs): the full kernel check (the last full run was 5c1fddc's), the GPU tests, and main's own acceptance JSONs
# (Qwen3-8B Q4_K_M, f16 and q8_0 KV). ~330 s.
SHA=$1
source tools/wip/lib.sh
begin $SHA-main
timeout 280 ./build-new/bw24-kernel-check > "$OUT/kc-all-$SHA.txt" 2>&1
echo "kernel-check (all) rc=$? $(tail -n 1 $OUT/kc-all-$SHA.txt) t=$(el)"
grep -E "FAIL|rror" "$OUT/kc-all-$SHA.txt" | head -20
gpu_tests $SHA
json $SHA 330 qwen3-8b:Q4_K_M ""
json $SHA 300 qwen3-8b:Q4_K_M "-q8kv" --kv q8_0
echo "end t=$(el)"
