#!/bin/bash
# next26 (branch wip/ops-prefill; carry .deps .carry):  bash tools/wip/next26.sh <sha>  (< 3 min; the session's last device minutes)
# qk_rope_store a warp per (head, token) and gated_act four a thread: kernel checks, GPU tests, then rows beside
# the same session's landed numbers (61b95be / 849255b: BF16 pp512 29,591 JSON / 28,743 row, Q4_K_M 21,146 / 21,655,
# tg128 395.6). Prediction: ~1 ms off a Qwen3-8B pass (rope ~30 -> ~8 us, gated_act 32 -> ~20 us, 36 layers): BF16 ~31k.
SHA=$1
source tools/wip/lib.sh
cfg . build-new $SHA
ninja -C build-new -j16 bw24-bench bw24-kernel-check bw24_model_tests bw24_gpu_vs_cpu_tests > /tmp/b2.log 2>&1 || grep -A3 error /tmp/b2.log | head -30
echo "built t=$(el)"
kc $SHA qk_rope gated_act
P="-p 512 -n 16 -r 2 -d 0"
row new new qwen3-8b:BF16 pp512 "$P"; row new new qwen3-8b:Q4_K_M pp512 "$P"
gpu_tests $SHA
row new new qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -r 1 -d 0"
cat "$OUT"/kc-*-$SHA.txt > "$OUT/kernel-check-$SHA.txt" && rm "$OUT"/kc-*-$SHA.txt
echo "end t=$(el)"
