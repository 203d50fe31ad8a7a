#!/bin/bash
# next42 (main after round 10; carry .deps .carry):  bash tools/wip/next42.sh  (< 4 min)
# Before the call, here:  d=.carry/main-src; rm -rf $d && mkdir -p $d && git archive 93984d2 | tar -x -C $d --exclude=tests/data
# Qwen3.5-9B Q8_0 tg128 read 299.8 in round 10's JSON against 307.1 in round 8's: round 9's main (93984d2) beside
# round 10's, depth 0 only, two rounds.
source tools/wip/lib.sh
build_ab x
for i in 1 2; do for b in main new; do row $b $b qwen3.5-9b:Q8_0 tg128 "-p 16 -n 128 -r 3 -d 0"; done; done
echo "end t=$(el)"
