#!/bin/bash
# next56 (carry .carry only):  bash tools/wip/next56.sh <sha>  (timeout_s 300)
# next55 ran gdn_decode: Qwen3.5-9B Q4_K_M 408.7 -> 424.8, Q8_0 304.4 -> 309.3, Qwen3.6-35B-A3B 371.2 -> 387.6; but its
# kernel check differed in bits (calls launched back to back: the second read the states before the first had
# written them; now a pass apart, as in the runner) and a 9-token prefill failed (the fused path had taken a GEMM
# pass; now GEMV passes only). This run: kernel check gdn, GPU tests, two rows each.
SHA=$1
source tools/wip/lib.sh
exec > >(tee "$OUT/console-$SHA.txt") 2>&1
bins
kc $SHA gdn
grep -E "gdn_decode" "$OUT/kc-gdn-$SHA.txt" | head -24
gpu_tests $SHA
P="-p 16 -n 128 -r 3 -d 0"
for b in base new; do row $b $b qwen3.5-9b:Q4_K_M tg128 "$P"; done; echo "t=$(el)"
for b in base new; do row $b $b qwen3.6-35b-a3b:Q4_K_M tg128 "$P"; done; echo "end t=$(el)"
