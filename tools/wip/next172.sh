#!/bin/bash
# next172 (carry .carry only): bash tools/wip/next172.sh SHA  (timeout 500) -- the BF16 bisect after next171 (old d93bff5
# 222.1 / 221.7, base = main's device code 216.4 / 215.4, same call). Programs: old = d93bff5 (round 22), r26 = 879ef01
# (round 26: after round 23's Q6_K tiles, round 24's D = 128 tensor-core flash decode, round 26's four segments), r28 =
# 01be39b (round 27's D = 256 flash decode and 24-block Q4_K pieces, round 28's writer value row), base = dba9642.
# Expect: the 5-6 tok/s step between two neighbours names the round; the rows alternate, two rounds.
SHA=$1
source tools/wip/lib.sh
begin $SHA
for i in 1 2; do for b in old r26 r28 base; do [ $(el) -lt 420 ] && row $b $b qwen3-8b:BF16 tg128 "-p 16 -n 128 -r 2"; done; done
echo "end t=$(el)"
