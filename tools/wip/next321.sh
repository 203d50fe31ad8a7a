#!/bin/bash
# next321 (round 58): flash decode's split CTAs in reverse split order (branch wip/split-reverse): with positions on
# the device the grid covers n_ctx's splits (8 x 37 CTAs a Qwen3-8B layer at the acceptance command's n_ctx 4,616, of
# which 8 x 33 have keys at positions 4,097-4,223), and the key-less ones, last in launch order, wait for a slot
# behind the 264 visible CTAs before they can return and let the grid complete. Reversed, they are dispatched first.
# Kernel check attention, then base (main) against new, the acceptance command's n_ctx (-p 512), alternated; main at
# -p 16 (n_ctx 4,232: 34 splits) beside it; both traced at depth 4096.
# Pack: base = main (HEAD on main), new = wip/split-reverse with bw24-kernel-check; trace--* as next319.
SHA=$1
source tools/wip/lib.sh
begin $SHA-split-reverse
kc $SHA attention
A="-p 512 -n 128 -d 4096 -r 2"
for i in 1 2; do for b in base new; do row $b $b qwen3-8b:Q4_K_M tg128 "$A"; done; done
row base-p16 base qwen3-8b:Q4_K_M tg128 "-p 16 -n 128 -d 4096 -r 2"
for b in base new; do row $b-q8 $b qwen3-8b:Q4_K_M tg128 "$A --kv q8_0"; done
for b in base new; do row $b-d0 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
for b in base new; do row $b-q8-d0 $b qwen3-8b:Q4_K_M tg128 "-p 512 -n 128 -r 2 --kv q8_0"; done
for b in base new; do row $b $b qwen3-30b-a3b:Q4_K_M tg128 "$A"; done
for b in base new; do row $b-d0 $b qwen3-30b-a3b:Q4_K_M tg128 "-p 512 -n 128 -r 2"; done
mkdir -p .carry/trace && cp build-trace/* tools/trace/step_profile.py .carry/trace/
for b in base new; do TRACE_BUILD=$b TRACE_LAYER_ROWS=12 TRACE_POS=8 trace_row 8b-$b qwen3-8b:Q4_K_M "-p 512 -n 128 -d 4096 -r 1"; done
echo "end t=$(el)"
