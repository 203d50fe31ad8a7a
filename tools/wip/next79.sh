#!/bin/bash
# next79 (carry .carry only):  bash tools/wip/next79.sh SHA  (timeout_s 280)
# new = wip/g4-3cta SHA: ffff370's four-head instance held to 80 registers (__launch_bounds__ 256, 3; no spill),
# three CTAs an SM. g4 = ffff370's bench. The acceptance rows (-p 512 -n 128) decode at n_ctx 4,736: 8 x 37 = 296
# CTAs a Qwen3-8B layer, over the 264 two an SM hold (next78: 371.7 / 439.1 = 84.6 % f16, 377.5 / 422.1 = 89.4 %
# q8_0). Prediction: one wave: depth 4096 +1-2 % in those rows, the -p 16 rows (264-272 CTAs) unchanged.
SHA=$1
source tools/wip/lib.sh
begin $SHA
verify_attention $SHA
J="-p 512 -n 128 -d 0,4096 -r 2 --device 0"
run() { timeout 80 ./build-new/bw24-bench -m synthetic:$1 $J "${@:3}" --json "$OUT/$SHA-$2-h200.json" | grep -E "tg128"; echo "t=$(el)"; }
run qwen3-8b:Q4_K_M qwen3-8b-Q4_K_M
run qwen3-8b:Q4_K_M qwen3-8b-Q4_K_M-kv-Q8_0 --kv q8_0
for b in g4 new; do row $b $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 -d 4096"; done
[ $(el) -lt 200 ] && run qwen3-30b-a3b:Q4_K_M qwen3-30b-a3b-Q4_K_M
echo "end t=$(el)"
