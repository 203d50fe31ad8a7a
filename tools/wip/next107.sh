#!/bin/bash
# next107 (carry .carry only): bash tools/wip/next107.sh SHA  (timeout 300)
# new = wip/q8-stream SHA: BW24_STREAM_Q8=1 Q8_0 streamed (pieces of 8, next106: 8B Q8_0 330.3 -> 377.7),
# 2 = all but gate-up, 3 = pieces of 16 (34.8 KB stages: two CTAs an SM). Rows only.
SHA=$1
source tools/wip/lib.sh
begin $SHA
A="-p 16 -n 128 -r 3"
for i in 1 2; do for q in 0 1 2 3; do row q8=$q new qwen3-8b:Q8_0 tg128 "$A" BW24_STREAM_Q8=$q; done; done
for q in 0 1 2 3; do row q8=$q new qwen3-0.6b:Q8_0 tg128 "$A" BW24_STREAM_Q8=$q; done
echo "end t=$(el)"
