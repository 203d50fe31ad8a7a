#!/bin/bash
# next343 (round 61): the acceptance rows not measured since round 31 (2026-12-02) on main's binary (71f60ab): Qwen3-8B
# BF16 and Q8_0 (issue 4: tg128 >= 220 / >= 400, pp512 >= 30,000 / >= 16,500), Qwen3.5-9B Q8_0 (issue 5: tg128 >= 375),
# Qwen3.5-27B Q4_K_M (issue 5: recorded). Pack: bash tools/wip/pack-bins.sh main HEAD bw24-bench (on main).
SHA=$1
source tools/wip/lib.sh
begin $SHA-acceptance
j() { local m=$1; [ $(el) -lt 480 ] || return 0
  timeout 150 ./build-main/bw24-bench -m synthetic:$m -p 512 -n 128 -d 0,4096 -r 2 --device 0 \
    --json "$OUT/$SHA-${m/:/-}-h200.json" | grep -E "pp512|tg128" | sed "s/^/$m /"; echo "$m done t=$(el)"; }
for m in qwen3-8b:BF16 qwen3-8b:Q8_0 qwen3.5-9b:Q8_0 qwen3.5-27b:Q4_K_M; do j $m; done
echo "end t=$(el)"
