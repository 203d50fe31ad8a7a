#!/bin/bash
# next195 (carry .carry/bins, .carry/rtlib, stories260K): bash tools/wip/next195.sh  (timeout 420)
# -- gdn decode's history turn after the conv, not before the wait (branch wip/gdn-turn f448f27 = new), and with the
# token's inputs loaded at once after the wait (wip/gdn-turn-ahead 6520435 = new2), against main (base). next194's
# timing build: the turn (fence, atomic, fence) held each CTA ~2 us before its wait, the fence waiting for the 64 KB
# state loads; the last CTA passed its wait 1.8 us after the first. Prediction: Qwen3.5-9B +1-2 %, Qwen3.6-35B-A3B
# +0.3-1 % (its last CTA passed the wait 0.8 us after the first).
source tools/wip/lib.sh
begin next195
kc f448f27 gdn
for i in 1 2; do for b in base new new2; do for m in qwen3.5-9b:Q4_K_M qwen3.6-35b-a3b:Q4_K_M; do
  row $b $b $m tg128 "-p 16 -r 3"; done; done; done
echo "end t=$(el)"
