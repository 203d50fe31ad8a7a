#!/bin/bash
# next173 (carry .carry only): bash tools/wip/next173.sh SHA  (timeout 400) -- the tip (nibble 3fd8cf7 + F16 / BF16 one
# kernel instance per cut 93a32e6): the float GEMV check, the BF16 A/B and acceptance JSON. The GPU tests: next174.
# Programs: old = d93bff5's bench (round 22: BF16 224.7 / 224.2 beside main's 216.2 / 216.8 in next172); new = HEAD's
# bench and kernel check (pack-bins.sh new HEAD bw24-bench bw24-kernel-check ...). The int8 instances' SASS is the
# nibble build's (next171; checked here with cuobjdump), so gemv_q8_streamed is not run again.
# Expect: gemv_float all ok; BF16 new ~ old (predicted +2-3 % over main: the spill is gone).
SHA=$1
source tools/wip/lib.sh
begin $SHA
kc $SHA gemv_float
for i in 1 2; do for b in old new; do row $b $b qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2"; done; done
json $SHA 300 qwen3-8b:BF16 ""
json $SHA 320 qwen3-8b:Q4_K_M ""
json $SHA 340 qwen3.5-9b:Q4_K_M ""
echo "end t=$(el)"
