#!/bin/bash
# next242 (run 2026-12-03): tg128 of main c3e5e3f's bench (base, device code of ce7971d) against fab0905's (new),
# alternated, two rounds, both MoE shapes; then fab0905's JSON acceptance rows. Carry .carry with the two benches.
SHA=$1
source tools/wip/lib.sh
begin $SHA
ab "-p 16 -n 128 -r 2" qwen3-30b-a3b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M
json $SHA 480 qwen3-30b-a3b:Q4_K_M ""
json $SHA 540 qwen3.6-35b-a3b:Q4_K_M ""
echo "end t=$(el)"
