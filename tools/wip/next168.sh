#!/bin/bash
# next168 (carry .carry only): bash tools/wip/next168.sh  (timeout 110) -- the last seconds of round 29's device time: did the
# scale decode by selects (c7bb4af) cost the 30B (JSON 517.4 on a46a5c0 in next165, 509.5 on c7bb4af in next167, other
# calls)? One row each of base (a46a5c0's bench) and new (c7bb4af's), same call.
source tools/wip/lib.sh
begin 30b
for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "-p 16 -n 128 -r 2"; done
echo "end t=$(el)"
