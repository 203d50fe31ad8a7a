#!/bin/bash
# next305 (round 54): GPU model tests on wip/kv-blocks a8c2c5a (the KV writer's block scales side by side).
SHA=$1
source tools/wip/lib.sh
begin $SHA-kv-blocks-tests
timeout 110 ./build-new/tests/bw24_model_tests "[gpu]" > "$OUT/gpu-tests-$SHA.txt" 2>&1; echo "GPU tests rc=$? t=$(el)"
grep -E "FAILED|passed|failed" "$OUT/gpu-tests-$SHA.txt" | head -5
